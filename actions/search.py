"""search: find a regex (or plain text) in the repo's text files; shows path:line: text for each match."""

import re
import time

import regex as bounded_re
from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError

MAX_MATCHES = 40
"""Matches shown."""
STOP_AFTER = 200
"""Matches after which the search stops reading files (a common word in a 2,000-file tree)."""
MAX_SEARCH_BYTES = 1_000_000
"""Files larger than this are not searched (generated tables, data, minified code)."""
SEARCH_SECONDS = 5.0
"""Matching time allowed to one search, all files together: a pattern that backtracks catastrophically (`(a|aa)+$`
on a long line) would otherwise run for hours inside one step, past every budget of the run."""


class Args(BaseModel):
    pattern: str = Field(description="regular expression or plain text to look for")
    path: str = Field(default=".", description="folder or file to search in")


def run(args: Args, ctx: Context) -> Observation:
    ws = ctx.workspace
    target = ws.resolve(args.path)
    prefix = "" if target == ws.root else ws.rel(target)
    pattern = compile_pattern(args.pattern)
    deadline = time.monotonic() + SEARCH_SECONDS
    matches, large, stopped, slow = [], 0, False, ""
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
        try:
            for n, line in enumerate(text.splitlines(), 1):
                if pattern.search(line, timeout=max(deadline - time.monotonic(), 0.001)):
                    matches.append(f"{name}:{n}: {line.strip()[:160]}")
        except TimeoutError:
            slow = f"{name}:{n}"
            break
    skipped = f"\n({large} file(s) over {MAX_SEARCH_BYTES // 1_000_000} MB not searched)" if large else ""
    if slow:
        too_long = (f"the pattern {args.pattern!r} took too long (over {SEARCH_SECONDS:g} s, stuck at {slow}; "
                    "catastrophic backtracking?); search for a plain substring or a simpler pattern")
        if not matches:
            raise ActionError(too_long)
        skipped += f"\n(search stopped: {too_long}; the matches above were found before it stopped)"
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


def compile_pattern(text: str) -> bounded_re.Pattern:
    """`text` as a regex with Python's `re` syntax (plain text when `re` rejects it), compiled by the `regex` module,
    whose matching takes a timeout."""
    try:
        re.compile(text)
    except re.error:
        text = re.escape(text)
    try:
        return bounded_re.compile(text)
    except bounded_re.error:  # `re` syntax that `regex` reads otherwise: the text itself
        return bounded_re.compile(bounded_re.escape(text))


ACTION = Action(name="search", args=Args, run=run, description=__doc__.strip(),
                example='Action: search {"pattern": "def apply_coupon"}',
                aliases=("grep", "find", "search_code", "search_files", "rg", "find_in_files"))
