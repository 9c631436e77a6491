"""The failing test beside the hole (the harness layer `clozetest`): cloze fills that see what the test expects.

A masked statement of a seeded mutant comes back from the code around it: the code was right before the mutation. A
real bug's fix is what the failing test asks for (a message worded another way, a case the code never handled), and
the code around the hole does not say it. So each infill is shown the failing test before the hole's file, in the
repository-level layout the coder model was trained on (`InfillOptions.files`): the test function with its
decorators (a parametrized test's cases are there) and pytest's `E` lines for it. The excerpt is the same for every
hole of a run, and it comes first, so the model's prefix cache reads it once.
"""

import ast
import textwrap

from pyharness.localise.filerank import find_test
from pyharness.workspace.tree import Workspace

MAX_TEST_LINES = 40
"""Lines of the failing test shown (a long test's first lines: its setup and first assertions)."""
MAX_IMPORT_LINES = 12
"""The test file's import lines shown above it (they name the code under test)."""
MAX_ERROR_LINES, MAX_ERROR_CHARS = 8, 200
"""pytest's `E` lines shown under the test, each cut at MAX_ERROR_CHARS."""


def failing_test_file(ws: Workspace, node_id: str, traceback: str) -> tuple[tuple[str, str], ...]:
    """The failing test `node_id` as one (path, text) file for `InfillOptions.files`: the file's imports, the test's
    source with decorators (inside its class when it has one), then the traceback's `E` lines as comments; () when
    it cannot be found."""
    found = find_test(ws, node_id)
    if found is None:
        return ()
    text, tree, classes, node = found
    outer = [f"class {c.name}:" for c in classes]
    lines = text.splitlines()
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    source = textwrap.dedent("\n".join(lines[first - 1:node.end_lineno])).splitlines()[:MAX_TEST_LINES]
    imports = [line for stmt in tree.body if isinstance(stmt, ast.Import | ast.ImportFrom)
               for line in lines[stmt.lineno - 1:stmt.end_lineno]][:MAX_IMPORT_LINES]
    shown = [*imports, *([""] if imports else []), *outer,
             *(textwrap.indent(line, "    " * len(outer)) if line else "" for line in source)]
    errors = error_lines(traceback)
    if errors:
        shown += ["", f"# pytest: {node_id} fails:", *(f"# {line}" for line in errors)]
    return ((node_id.partition("::")[0], "\n".join(shown) + "\n"),)


def error_lines(traceback: str) -> list[str]:
    """pytest's `E` lines of a traceback (the exception, the assertion and its diff), at most MAX_ERROR_LINES."""
    found = [line.strip() for line in traceback.splitlines() if line.strip().startswith("E ")]
    return [line[:MAX_ERROR_CHARS] for line in found[:MAX_ERROR_LINES]]
