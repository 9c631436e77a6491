"""Merge a snippet of top-level functions/classes into a Python file: each replaces the one of the same name.

Small models asked for an edit often send the whole corrected function instead of SEARCH/REPLACE
blocks, or rewrite a file with only the function they changed; merging by name keeps the rest.
"""

import ast
import textwrap


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


def _functions(tree: ast.Module) -> dict[str, ast.FunctionDef | ast.AsyncFunctionDef]:
    """'name' for top-level functions and 'Class.name' for methods of top-level classes."""
    found = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.setdefault(node.name, node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.setdefault(f"{node.name}.{item.name}", item)
    return found


def merge_functions(old: str, snippet: str) -> str | None:
    """`old` with each function or method of `snippet` put in place of its namesake, re-indented to where it goes.

    A method sent without its class matches the one method of that name in `old`. None when nothing matched or
    either side does not parse; snippet functions without a namesake are left out.
    """
    try:
        old_funcs, new_funcs = _functions(ast.parse(old)), _functions(ast.parse(snippet))
    except (SyntaxError, ValueError):
        return None
    by_short: dict[str, list[str]] = {}
    for name in old_funcs:
        by_short.setdefault(name.rsplit(".", 1)[-1], []).append(name)
    snippet_lines, lines = snippet.splitlines(), old.splitlines()
    moves = {}
    for name, node in new_funcs.items():
        target = name if name in old_funcs else None
        if target is None and len(by_short.get(name.rsplit(".", 1)[-1], [])) == 1:
            target = by_short[name.rsplit(".", 1)[-1]][0]
        if target is None or target in moves:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        moves[target] = textwrap.dedent("\n".join(snippet_lines[first - 1:node.end_lineno]))
    if not moves:
        return None
    for name in sorted(moves, key=lambda n: -old_funcs[n].lineno):
        node = old_funcs[name]
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
        lines[first - 1:node.end_lineno] = textwrap.indent(moves[name], indent).splitlines()
    return "\n".join(lines) + ("\n" if old.endswith("\n") else "")
