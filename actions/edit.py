"""edit: replace lines start..end of a file with the lines in the code block (read the file first to see the \
numbers); SEARCH/REPLACE blocks or a whole corrected function also work."""

import re

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError
from pyharness.harness.codemerge import merge_definitions

BLOCK = re.compile(r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
                   re.MULTILINE | re.DOTALL)

FENCED = re.compile(r"^[ \t]*```[\w+\-.]*[^\n]*\n(.*?)^[ \t]*```", re.MULTILINE | re.DOTALL)


class Args(BaseModel):
    """An edit's arguments. `search`/`replace` are the two halves of a SEARCH/REPLACE block given as arguments: names
    the model writes itself (the embedded model's recorded replies use them), kept as it writes them, like the
    action names."""

    path: str = Field(description="file to change")
    body: str | None = Field(default=None, description="SEARCH/REPLACE blocks (sent after the Action line)")
    search: str | None = Field(default=None, description="exact text to replace (instead of a body block)")
    replace: str | None = Field(default=None, description="the new text")
    start: int | None = Field(default=None, description="first line to replace (with end, the body is the new lines)")
    end: int | None = Field(default=None, description="last line to replace")


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
        starts, at = [], text.find(search)
        while at != -1:
            starts.append(str(text.count("\n", 0, at) + 1))
            at = text.find(search, at + 1)
        raise ActionError(f"edit {path}: the SEARCH text matches {count} places (lines {', '.join(starts)}); "
                          "include more lines so it matches one, or use start/end line numbers")
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
    raise ActionError(f"edit {path}: SEARCH text not found.{_closest(text, search)} Copy the exact lines to "
                      f"change from {path}, or use start/end line numbers.")


def _closest(text: str, search: str) -> str:
    """Where the file has the line most like the SEARCH text's first line (a steer for the next try)."""
    import difflib

    wanted = next((ln.strip() for ln in search.splitlines() if ln.strip()), "")
    lines = text.splitlines()
    scored = [(difflib.SequenceMatcher(None, wanted, ln.strip()).ratio(), n) for n, ln in enumerate(lines, 1)]
    if not scored:
        return ""
    ratio, n = max(scored)
    return f" The closest line is {n}: {lines[n - 1].strip()!r}." if ratio >= 0.6 else ""


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


def _without_fence(body: str) -> str:
    m = FENCED.search(body)
    return m.group(1) if m else body


def _anchor(lines: list[str], new: list[str], start: int, end: int) -> tuple[int, int] | None:
    """Wrong line numbers: new lines whose first and last lines match exactly one same-sized place move there."""
    body = [ln.rstrip() for ln in new]
    while body and not body[-1].strip():
        body.pop()
    if len(body) < 2 or not body[0].strip() or not body[-1].strip():
        return None
    first = body[0]
    places = [i for i, ln in enumerate(lines, 1) if ln.rstrip() == first
              and i + len(body) - 1 <= len(lines) and lines[i + len(body) - 2].rstrip() == body[-1]]
    if len(places) != 1 or places[0] == start:
        return None
    return places[0], places[0] + len(body) - 1


def _widen(lines: list[str], new: list[str], start: int, end: int) -> tuple[int, int]:
    """Line numbers one off: new lines that repeat (nearly) the line just before or after the range take it in."""
    import difflib

    def same(a: str, b: str) -> bool:
        return bool(a.strip()) and _indent(a) == _indent(b) and \
            difflib.SequenceMatcher(None, a.strip(), b.strip()).ratio() >= 0.8

    if len(new) > end - start + 1 and start > 1 and same(new[0], lines[start - 2]):
        start -= 1
    if len(new) > end - start + 1 and end < len(lines) and same(new[-1], lines[end]):
        end += 1
    return start, end


def other_forms(args: Args, old: str) -> tuple[str, str] | None:
    """A body with no SEARCH/REPLACE block: new lines for start..end, or whole functions merged by name."""
    body = _without_fence(args.body or "")
    if not body.strip() or BLOCK.search(args.body or ""):
        return None
    if args.start is not None:
        lines = old.splitlines(keepends=True)
        end = args.end if args.end is not None else args.start
        if not 1 <= args.start <= end <= len(lines):
            raise ActionError(f"edit {args.path}: lines {args.start}-{end} are outside the file (1-{len(lines)})")
        text = body if body.endswith("\n") else body + "\n"
        start, end = _anchor(lines, text.splitlines(), args.start, end) or _widen(lines, text.splitlines(),
                                                                                  args.start, end)
        return "".join(lines[:start - 1]) + text + "".join(lines[end:]), f"replaced lines {start}-{end}"
    merged = merge_definitions(old, body)
    if merged:
        return merged[0], f"replaced {', '.join(merged[1])} (the rest of the file kept)"
    return None


def run(args: Args, ctx: Context) -> Observation:
    ws = ctx.workspace
    old = ws.read_text(args.path)
    other = other_forms(args, old)
    if other:
        new, how = other
    else:
        new, pairs = old, blocks(args)
        for search, replace in pairs:
            new = apply(new, search, replace, args.path)
        how = f"{len(pairs)} block(s) applied"
    if new == old:
        raise ActionError(f"edit {args.path}: the new code is the same as the file, so nothing changed; "
                          "change the line that is wrong")
    if ctx.lint:
        from pyharness.harness.imports import stdlib_imports
        from pyharness.harness.lint import check_change, lazy_placeholder

        lazy = lazy_placeholder(new)
        if lazy and lazy_placeholder(old) != lazy:
            raise ActionError(f"edit {args.path} refused: the new code has a placeholder ({lazy!r}) instead of "
                              "code; send the real lines (an edit changes only what its SEARCH text matches)")

        problem = check_change(args.path, old, new)
        fixed = stdlib_imports(new) if problem else None
        if fixed and check_change(args.path, old, fixed[0]) is None:
            new, how = fixed[0], f"{how}; the harness added the missing import(s): {'; '.join(fixed[1])}"
        elif problem:
            raise ActionError(f"edit {args.path} refused, it would break the file:\n{problem}")
    rel, _ = ws.write_text(args.path, new)
    return Observation(f"Edited {rel}: {how}.", data={"changed": rel})


ACTION = Action(
    name="edit", args=Args, run=run, description=__doc__.strip(), body_arg="body",
    example=('Action: edit {"path": "shop/cart.py", "start": 12, "end": 13}\n```python\n    if not items:\n'
             '        return 0.0\n```'),
    aliases=("edit_file", "replace", "str_replace", "modify", "patch", "apply_patch", "update_file", "change",
             "replace_in_file", "search_replace", "str_replace_editor"))
