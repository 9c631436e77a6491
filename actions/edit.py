"""edit: change part of a file with SEARCH/REPLACE blocks; each SEARCH text must match exactly one place."""

import re

from pydantic import BaseModel, Field

from actions.base import Action, Context, Observation
from pyharness.errors import ActionError

BLOCK = re.compile(r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
                   re.MULTILINE | re.DOTALL)


class Args(BaseModel):
    path: str = Field(description="file to change")
    body: str | None = Field(default=None, description="SEARCH/REPLACE blocks (sent after the Action line)")
    search: str | None = Field(default=None, description="exact text to replace (instead of a body block)")
    replace: str | None = Field(default=None, description="the new text")


def blocks(args: Args) -> list[tuple[str, str]]:
    """The (search, replace) pairs of an edit, from its body block or its arguments."""
    if args.search is not None:
        return [(args.search, args.replace or "")]
    found = [(s, r) for s, r in BLOCK.findall(args.body or "")]
    if not found:
        raise ActionError("edit needs a SEARCH/REPLACE block after the Action line, like:\n" + ACTION.example)
    return found


def apply(text: str, search: str, replace: str, path: str) -> str:
    """Replace the one place `search` matches (exactly, else ignoring trailing whitespace)."""
    if not search.strip():
        raise ActionError(f"edit {path}: the SEARCH text is empty; copy the lines to change from the file")
    count = text.count(search)
    if count == 1:
        return text.replace(search, replace, 1)
    if count > 1:
        raise ActionError(f"edit {path}: the SEARCH text matches {count} places; include more lines so it matches one")
    lines, wanted = text.splitlines(keepends=True), [s.rstrip() for s in search.splitlines()]
    hits = [i for i in range(len(lines) - len(wanted) + 1)
            if [ln.rstrip() for ln in lines[i:i + len(wanted)]] == wanted]
    if len(hits) == 1:
        i = hits[0]
        tail = "\n" if lines[i + len(wanted) - 1].endswith("\n") and not replace.endswith("\n") else ""
        return "".join(lines[:i]) + replace + tail + "".join(lines[i + len(wanted):])
    moved = _reindented(lines, search, replace)
    if moved is not None:
        return moved
    raise ActionError(f"edit {path}: SEARCH text not found; read {path} and copy the exact lines to change")


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _reindented(lines: list[str], search: str, replace: str) -> str | None:
    """Match SEARCH with its indentation shifted as a whole (small models often add or drop a level)."""
    wanted = search.strip("\n").splitlines()
    body = [w for w in wanted if w.strip()]
    if not body:
        return None
    cut = min(len(_indent(w)) for w in body)
    wanted = [w[cut:].rstrip() if w.strip() else "" for w in wanted]
    first = next(k for k, w in enumerate(wanted) if w)
    hits = []
    for i in range(len(lines) - len(wanted) + 1):
        window = [ln.rstrip() for ln in lines[i:i + len(wanted)]]
        pad = _indent(window[first])
        if window == [pad + w if w else "" for w in wanted]:
            hits.append((i, pad))
    if len(hits) != 1:
        return None
    i, pad = hits[0]
    new = [pad + r[min(cut, len(_indent(r))):] if r.strip() else "" for r in replace.strip("\n").splitlines()]
    text = "\n".join(new) + ("\n" if new else "")
    return "".join(lines[:i]) + text + "".join(lines[i + len(wanted):])


def run(args: Args, ctx: Context) -> Observation:
    ws = ctx.workspace
    old = ws.read_text(args.path)
    new = old
    for search, replace in blocks(args):
        new = apply(new, search, replace, args.path)
    if new == old:
        raise ActionError(f"edit {args.path}: REPLACE is the same as SEARCH; nothing would change")
    if ctx.lint:
        from pyharness.harness.lint import check_change

        problem = check_change(args.path, old, new)
        if problem:
            raise ActionError(f"edit {args.path} refused, it would break the file:\n{problem}")
    rel, _ = ws.write_text(args.path, new)
    return Observation(f"Edited {rel}: {len(blocks(args))} block(s) applied.", data={"changed": rel})


ACTION = Action(
    name="edit", args=Args, run=run, description=__doc__.strip(), body_arg="body",
    example=('Action: edit {"path": "shop/cart.py"}\n<<<<<<< SEARCH\n    if not items:\n        return 0\n=======\n'
             '    if not items:\n        return 0.0\n>>>>>>> REPLACE'),
    aliases=("edit_file", "replace", "str_replace", "modify", "patch", "apply_patch", "update_file", "change",
             "replace_in_file", "search_replace", "str_replace_editor"))
