"""read: show a file with numbered lines (optionally a line range); the way to look before you edit."""

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation

MAX_LINES = 250
"""Lines one read shows; a longer file ends with a notice naming the next range to read."""
MAX_LINE_CHARS = 2000
"""Characters of one line shown; a longer line is cut with a notice."""


class Args(BaseModel):
    path: str = Field(description="file path relative to the repo root")
    start: int | None = Field(default=None, description="first line to show (1-based)")
    end: int | None = Field(default=None, description="last line to show")


def run(args: Args, ctx: Context) -> Observation:
    real = ctx.workspace.resolve(args.path)
    text = ctx.workspace.read_text(args.path)
    rel = ctx.workspace.rel(real)
    ctx.workspace.read_files.add(rel)
    lines = text.splitlines()
    if not lines:
        return Observation(f"{rel} is empty.")
    start = max(1, args.start or 1)
    end = min(len(lines), args.end or len(lines), start + MAX_LINES - 1)
    if start > len(lines):
        return Observation(f"{rel} has only {len(lines)} lines.", ok=False)
    width = len(str(end))
    body = "\n".join(f"{n:>{width}}| {_cut(lines[n - 1])}" for n in range(start, end + 1))
    more = (f"\n... {len(lines) - end} more lines: read {rel} with start={end + 1} (add end= for a range)"
            if end < len(lines) else "")
    return Observation(f"{rel} (lines {start}-{end} of {len(lines)}):\n{body}{more}")


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return f"{line[:MAX_LINE_CHARS]} ... [line cut: {len(line)} characters, {len(line) - MAX_LINE_CHARS} not shown]"


ACTION = Action(name="read", args=Args, run=run, description=__doc__.strip(),
                example='Action: read {"path": "shop/cart.py"}',
                aliases=("read_file", "cat", "open", "open_file", "view", "show", "view_file", "readfile", "get_file"))
