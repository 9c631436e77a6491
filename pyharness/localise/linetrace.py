"""What the repo's own code did during one failing test: a fault-localisation hint for fix mode.

The test runs once more in a subprocess, traced (`sys.settrace`) only while the test itself runs (not
while modules import), recording lines of repo files that are not tests. For each `if`/`elif`/`while`
condition that ran and calls nothing, the first time it ran, the tracer also records the values of the
names in it and what the condition came to (`line.quantity=10, BULK_THRESHOLD=10 -> False`): the one
fact a small model needs to see an off-by-one comparison, shown without evaluating any call.
"""

import json
import os
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.workspace.noise import QUIET_ENV
from pyharness.workspace.procs import clean_env, run_tree
from pyharness.workspace.testrun import import_roots

TRACER = r"""
import ast, json, os, sys
import pytest
root, out, node = sys.argv[1], sys.argv[2], sys.argv[3]
seen, notes, tables = {}, {}, {}
UNSAFE = (ast.Call, ast.Await, ast.NamedExpr, ast.Lambda, ast.Yield, ast.YieldFrom, ast.Subscript)

def conditions(path):
    # line -> (condition code, [(name text, code)]) for if/elif/while tests that call nothing
    if path not in tables:
        table = {}
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
            tree = ast.parse(source)
        except (OSError, SyntaxError, ValueError):
            tree = None
        for stmt in ast.walk(tree) if tree else ():
            if not isinstance(stmt, (ast.If, ast.While)) or any(isinstance(n, UNSAFE) for n in ast.walk(stmt.test)):
                continue
            names = [ast.get_source_segment(source, n) for n in ast.walk(stmt.test)
                     if isinstance(n, (ast.Name, ast.Attribute))]
            names = [n for n in names if n and "\n" not in n]
            names = [n for n in dict.fromkeys(names) if not any(o.startswith(n + ".") for o in names)]
            names = [n for n in names if n not in ("True", "False", "None")]
            if names:
                codes = [(n, compile(n, path, "eval")) for n in names]
                table[stmt.test.lineno] = (compile(ast.Expression(stmt.test), path, "eval"), codes)
        tables[path] = table
    return tables[path]

def show(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."

def note(frame, rel, line):
    found = conditions(frame.f_code.co_filename).get(line)
    if found is None or line in notes.setdefault(rel, {}):
        return
    test, codes = found
    scope = (frame.f_globals, frame.f_locals)
    parts = []
    for name, code in codes:
        try:
            value = eval(code, *scope)
        except Exception:
            return
        if callable(value) or type(value).__name__ == "module":
            continue
        parts.append(f"{name}={show(value)}")
    try:
        result = bool(eval(test, *scope))
    except Exception:
        return
    notes[rel][line] = ", ".join(parts) + f" -> {result}"

def tracer(frame, event, arg):
    name = frame.f_code.co_filename
    if not name.startswith(root) or "/tests/" in name or os.path.basename(name).startswith("test_"):
        return None
    if event == "line":
        rel = name[len(root):].lstrip("/")
        seen.setdefault(rel, set()).add(frame.f_lineno)
        note(frame, rel, frame.f_lineno)
    return tracer

class Trace:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        sys.settrace(tracer)
        try:
            yield
        finally:
            sys.settrace(None)
try:
    pytest.main([node, "-q", "-p", "no:cacheprovider", "--no-header", "-x"], plugins=[Trace()])
finally:
    with open(out, "w") as f:
        json.dump({"lines": {k: sorted(v) for k, v in seen.items()}, "notes": notes}, f)
"""


@dataclass
class RunTrace:
    """Lines of repo files that ran during one test, and what their branch conditions came to."""

    lines: dict[str, set[int]] = field(default_factory=dict)
    notes: dict[str, dict[int, str]] = field(default_factory=dict)
    """file -> line -> `name=value, ... -> True|False` (first time the condition ran)."""
    scores: dict[str, dict[int, float]] = field(default_factory=dict)
    """file -> line -> how suspicious the line is (`spectrum.spectrum`; empty when not worked out)."""


def trace_test(root: Path, node_id: str, timeout: float = 60.0, python: str | None = None,
               readonly: list[str] | None = None) -> RunTrace:
    """Trace `node_id` in a subprocess on a scrubbed environment (empty if tracing failed or timed out); the
    repo-relative files `readonly` are mounted read-only."""
    data = run_script(root, TRACER, [node_id], timeout, python, readonly)
    return RunTrace(
        lines={k: set(v) for k, v in data.get("lines", {}).items()},
        notes={k: {int(n): text for n, text in v.items()} for k, v in data.get("notes", {}).items()},
    )


def run_script(root: Path, script: str, args: list[str], timeout: float, python: str | None = None,
               readonly: list[str] | None = None) -> dict:
    """Run a tracer `script` (`python -c script ROOT OUT *args`) in `root` on a scrubbed environment and return
    the JSON it wrote to OUT; {} when it failed, wrote nothing or timed out."""
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    env = clean_env({**QUIET_ENV, "PYTHONPATH": os.pathsep.join(import_roots(root))})
    try:
        done = run_tree([python or sys.executable, "-c", script, str(root), out, *args], cwd=root, env=env,
                        timeout=timeout, write=[Path(out)], readonly=[root / rel for rel in readonly or []])
        return {} if done.timed_out else json.loads(Path(out).read_text() or "{}")
    except (OSError, json.JSONDecodeError):
        return {}
    finally:
        Path(out).unlink(missing_ok=True)
