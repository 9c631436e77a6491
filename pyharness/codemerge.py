"""Merge a snippet of top-level functions/classes into a Python file: each replaces the one of the same name.

Small models asked for an edit often send the whole corrected function instead of SEARCH/REPLACE
blocks, or rewrite a file with only the function they changed; merging by name keeps the rest.
"""

import ast


def definitions(source: str) -> dict[str, tuple[int, int]] | None:
    """Top-level def/class name -> (first line incl. decorators, last line), 1-based; None if it does not parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            found[node.name] = (first, node.end_lineno or node.lineno)
    return found


def merge_definitions(old: str, snippet: str) -> tuple[str, list[str]] | None:
    """`old` with each definition in `snippet` put in place of its namesake; None unless every one has a namesake."""
    new_defs, old_defs = definitions(snippet), definitions(old)
    if not new_defs or not old_defs or any(name not in old_defs for name in new_defs):
        return None
    snippet_lines, lines = snippet.splitlines(), old.splitlines()
    for name, (start, end) in sorted(old_defs.items(), key=lambda item: -item[1][0]):
        if name in new_defs:
            s, e = new_defs[name]
            lines[start - 1:end] = snippet_lines[s - 1:e]
    merged = "\n".join(lines) + ("\n" if old.endswith("\n") else "")
    return merged, sorted(new_defs, key=lambda n: new_defs[n][0])
