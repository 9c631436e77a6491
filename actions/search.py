"""search: find a regex (or plain text) in the repo's text files; shows path:line: text for each match."""

import re

from pydantic import BaseModel, Field

from actions.base import Action, Context, Observation
from pyharness.errors import ActionError

MAX_MATCHES = 40
"""Matches shown."""
STOP_AFTER = 200
"""Matches after which the search stops reading files (a common word in a 2,000-file tree)."""
MAX_SEARCH_BYTES = 1_000_000
"""Files larger than this are not searched (generated tables, data, minified code)."""


class Args(BaseModel):
    pattern: str = Field(description="regular expression or plain text to look for")
    path: str = Field(default=".", description="folder or file to search in")


def run(args: Args, ctx: Context) -> Observation:
    ws = ctx.workspace
    target = ws.resolve(args.path)
    prefix = "" if target == ws.root else ws.rel(target)
    try:
        regex = re.compile(args.pattern)
    except re.error:
        regex = re.compile(re.escape(args.pattern))
    matches, large, stopped = [], 0, False
    for name in ws.files():
        if prefix and name != prefix and not name.startswith(prefix + "/"):
            continue
        if len(matches) >= STOP_AFTER:
            stopped = True
            break
        try:
            if ws.resolve(name).stat().st_size > MAX_SEARCH_BYTES:
                large += 1
                continue
            text = ws.read_text(name)  # through the path policy again: the tree may have changed since files()
        except (ActionError, OSError):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if regex.search(line):
                matches.append(f"{name}:{n}: {line.strip()[:160]}")
    skipped = f"\n({large} file(s) over {MAX_SEARCH_BYTES // 1_000_000} MB not searched)" if large else ""
    if not matches:
        return Observation(f"No match for {args.pattern!r}. Try a shorter pattern or list the files.{skipped}")
    # Lines shown by a search count as read: an answer may cite them (ask mode's acceptance rule).
    ws.read_files.update(m.split(":", 1)[0] for m in matches[:MAX_MATCHES])
    if stopped:
        count = f"at least {len(matches)} matches"
        more = (f"\n... more matches not shown (the search stopped after {len(matches)}); use a more specific "
                "pattern or give a folder or file as path")
    else:
        count = f"{len(matches)} matches"
        more = f"\n... and {len(matches) - MAX_MATCHES} more matches" if len(matches) > MAX_MATCHES else ""
    return Observation(f"{count} for {args.pattern!r}:\n" + "\n".join(matches[:MAX_MATCHES]) + more + skipped)


ACTION = Action(name="search", args=Args, run=run, description=__doc__.strip(),
                example='Action: search {"pattern": "def apply_coupon"}',
                aliases=("grep", "find", "search_code", "search_files", "rg", "find_in_files"))
