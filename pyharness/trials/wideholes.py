"""Holes wider than one statement (the harness layer `wideholes`), and holes moved when a fill is kept under them.

Real fixes are seldom one statement: they add a guard, change a condition and its block, or rewrite two neighbouring
lines. Around each of the best-ranked suspect statements the cloze rounds also mask
- a *span*: a compound statement with its whole block, or a simple statement with the statement after it (before it
  when it is the last of its block; with the header of its `if`/`for`/`while`/`with` when it is the only statement
  of that block), at most MAX_SPAN lines, filled as one piece of code;
- an *insertion*: an empty hole just above the statement, at its indentation, for a missing guard or call.
The line ranking decides where; the fills decide what, as for one statement.

When a fill makes the tests better without making them pass (the layer `stacking`), it stays in the file and the
holes still to come are moved onto the new text (`rebase`), so a second hole can finish a fix of two hunks.
"""

import ast
from dataclasses import dataclass

from pyharness.localise.linerank import BODIES

WIDE_SUSPECTS = 3
"""The best-ranked suspect statements that also get a span and an insertion hole."""
GUARDS = (ast.If, ast.While, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)
"""Compound statements whose header decides whether their block runs: a statement alone in such a block spans with
the header (a wrong guard and its one statement are often fixed together)."""
HEADS = ("elif", "else", "except", "finally", "case")
"""A line starting with one of these continues a compound statement: nothing can be inserted above it."""


@dataclass(frozen=True)
class Region:
    """Lines start..end of a file a hole masks (an insertion: end = start - 1, nothing masked, the hole above start)."""

    kind: str
    """'span' or 'insert'."""
    start: int
    end: int


def wide_regions(source: str, start: int, end: int, max_span: int) -> list[Region]:
    """The span and the insertion around the suspect statement at lines start..end of `source` (either left out
    when it does not apply: a span over `max_span` lines, a line that continues a compound statement)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    found: list[Region] = []
    place = _statement_at(tree, start)
    if place is not None:
        parent, field, block, index = place
        node = block[index]
        if any(getattr(node, name, None) for name in BODIES):
            span = (node.lineno, node.end_lineno or end)
        elif index + 1 < len(block):
            span = (node.lineno, block[index + 1].end_lineno or end)
        elif index > 0:
            span = (_first_line(block[index - 1]), node.end_lineno or end)
        elif field == "body" and isinstance(parent, GUARDS):
            span = (parent.lineno, node.end_lineno or end)  # alone in its block: with the condition that guards it
        else:
            span = None
        if span and span[1] - span[0] + 1 <= max_span and span != (start, end):
            found.append(Region("span", *span))
    head = lines[start - 1].lstrip() if 0 < start <= len(lines) else ""
    if place is not None and not head.startswith(HEADS):
        found.append(Region("insert", start, start - 1))
    return found


def _statement_at(tree: ast.AST, line: int) -> tuple[ast.AST, str, list[ast.stmt], int] | None:
    """The statement holding the block (a statement list) in which a statement starts on `line`, the block's field
    name, the block, and the statement's index there; None when no statement of a block starts there (a function's
    header, an `elif`'s condition, a line inside an expression)."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if not isinstance(block, list) or isinstance(node, ast.Module | ast.ClassDef):
                continue
            for index, stmt in enumerate(block):
                if isinstance(stmt, ast.stmt) and _first_line(stmt) == line and \
                        not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                    return node, name, block, index
    return None


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])


def interleave(line_holes: list, wide: dict[int, list]) -> list:
    """The holes in the order they are asked: the line holes, with the wide holes of the suspect ranked k (`wide[k]`)
    after line hole k + 1 (the best single statement and the next one go first: most bugs are still one line)."""
    ordered = []
    for n, hole in enumerate(line_holes):
        ordered.append(hole)
        ordered.extend(wide.get(n, []))  # line hole n + 1 is followed by suspect n's
    ordered.extend(h for rank in sorted(wide) if rank >= len(line_holes) for h in wide[rank])
    return ordered


def rebase(holes: list, path: str, start: int, end: int, new_lines: list[str], old_count: int) -> list:
    """The holes still to come after lines start..end of `path` were replaced (the file now `new_lines`, it had
    `old_count` lines): those in other files as they were; those in the file above the change kept, those below it
    (an insertion at the very line inserted at too: it stays above the same statement) moved by the change in length,
    those overlapping it dropped; each of the file's holes reads the new text."""
    delta = len(new_lines) - old_count
    kept = []
    for hole in holes:
        if hole.path != path:
            kept.append(hole)
        elif hole.end < start and hole.start < start:
            kept.append(hole.moved(0, new_lines))
        elif hole.start > end:
            kept.append(hole.moved(delta, new_lines))
    return kept
