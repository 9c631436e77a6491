"""Which files a task is about, for the context of a large tree: the files the failing traceback names come first
(code before tests, innermost first), then the rest ranked by BM25 (the `bm25s` library) of the task text,
traceback and failing test against each file's path words and the names it defines (code identifiers split at
snake_case and camelCase). A small tree needs none of this: every file is shown, as before.
"""

import ast
import re
import textwrap

from pyharness.errors import ActionError
from pyharness.workspace.tree import Workspace

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b)|[A-Z]?[a-z]+|[A-Z]+|\d+")
DEFINED = re.compile(r"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=[^=]",
                     re.MULTILINE)
TRACE_PATH = re.compile(r"File \"([^\"]+)\", line \d+|^([^\s:\"]+\.py):\d+", re.MULTILINE)
STOPWORDS = frozenset("""a an and are as assert at be by def class else elif except false for from if import in is it
lambda none not of or pass py raise return self cls the to test tests true try while with init main""".split())
PATH_WEIGHT = 3
"""A path word counts as much as this many defined names (the file name is the strongest cue a task gives)."""


def words(text: str) -> list[str]:
    """Lower-case words of the identifiers in text: `scan_and_fill` -> scan, fill; `CosetTable` -> coset, table."""
    out = []
    for ident in IDENTIFIER.findall(text):
        for part in ident.split("_"):
            out += [w.lower() for w in CAMEL.findall(part)]
    return [w for w in out if len(w) > 1 and not w.isdigit() and w not in STOPWORDS]


def defined_names(source: str) -> list[str]:
    """The functions, classes and module-level names a Python source defines (by a line scan, no parse)."""
    return [a or b for a, b in DEFINED.findall(source)]


def traceback_files(traceback: str, files: list[str]) -> list[str]:
    """The repo files a traceback names, innermost first (pytest prints the test first, the deepest frame last)."""
    known = set(files)
    found = []
    for match in TRACE_PATH.finditer(traceback):
        name = (match.group(1) or match.group(2)).replace("\\", "/")
        if name not in known:  # an absolute path or ./x: the longest repo file it ends with
            name = next((f for f in files if name.endswith("/" + f)), "")
        if name and name not in found:
            found.append(name)
    return found[::-1]


def _document(ws: Workspace, rel: str) -> list[str]:
    """The words a file is found by: its path (weighted), and for Python the names it defines."""
    path_words = words(rel.removesuffix(".py").replace("/", " ")) * PATH_WEIGHT
    if not rel.endswith(".py"):
        return path_words
    names = ws.cache.derive(ws.root / rel, "defined", lambda text: words(" ".join(defined_names(text))))
    return path_words + list(names or [])


def rank(ws: Workspace, query: str, traceback: str = "", files: list[str] | None = None) -> list[str]:
    """Every file of the repo, most relevant first: traceback files, then by BM25 score (ties keep sorted order)."""
    files = ws.files() if files is None else files
    first = traceback_files(traceback, files)
    first = [f for f in first if not ws.is_test_path(f)] + [f for f in first if ws.is_test_path(f)]
    taken = set(first)
    rest = [f for f in files if f not in taken]
    terms = words(f"{query}\n{traceback}")
    if not rest or not terms:
        return first + rest
    import bm25s

    retriever = bm25s.BM25()
    retriever.index([_document(ws, f) for f in rest], show_progress=False)
    scores = retriever.get_scores(terms)
    order = sorted(range(len(rest)), key=lambda i: (-float(scores[i]), i))
    return first + [rest[i] for i in order]


def focus(ws: Workspace, traceback: str, extra: list[str] = (), query: str = "", limit: int = 40) -> list[str]:
    """The Python source files (not tests) worth parsing for the failing code, sorted: all of them on a small tree;
    on a large one the traceback's files, `extra` (e.g. files a traced test ran) and the best `limit` by rank."""
    files = ws.files()
    sources = [f for f in files if f.endswith(".py") and not ws.is_test_path(f)]
    if len(sources) <= limit:
        return sources
    ranked = [f for f in rank(ws, query, traceback, files) if f.endswith(".py") and not ws.is_test_path(f)]
    chosen = set(ranked[:limit]) | (set(extra) & set(sources))
    return sorted(chosen)


def tests_query(ws: Workspace, failing: list[str]) -> str:
    """The failing tests' own source (what they call is what the task is about); '' when none is found."""
    return "\n".join(test_source(ws, node_id) for node_id in failing[:3])


def find_test(ws: Workspace, node_id: str) -> tuple[str, ast.Module, list[ast.ClassDef], ast.AST] | None:
    """A test (`path::name` or `path::Class::name`, parameters ignored) found in its file: the file's text and tree,
    the classes around the test, outermost first, and the test's node; None when it cannot be found."""
    path, _, rest = node_id.partition("::")
    try:
        text = ws.read_text(path)
        tree = ast.parse(text)
    except (OSError, SyntaxError, ValueError, ActionError):
        return None
    body: list[ast.stmt] = tree.body
    node, outer = None, []
    for name in rest.split("[")[0].split("::"):
        if node is not None:
            outer.append(node)
        node = next((n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                     and n.name == name), None)
        if node is None:
            return None
        body = node.body
    return (text, tree, outer, node) if node is not None else None


def test_source(ws: Workspace, node_id: str, max_lines: int = 40) -> str:
    """The source of a failing test (`path::name` or `path::Class::name`), or '' when it cannot be found."""
    found = find_test(ws, node_id)
    if found is None:
        return ""
    text, _, _, node = found
    source = ast.get_source_segment(text, node, padded=False) or ""
    lines = textwrap.dedent(source).splitlines()
    return "\n".join(lines[:max_lines]) + "\n"
