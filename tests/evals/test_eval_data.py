"""Consistency checks for the `stdout` eval suite in evals/stdout/ (task files, references, slice20.txt).

To keep this fast, all cases of one task run in a single subprocess: a small driver execs the reference once
per case with fresh globals and in-memory stdin/stdout. evals/stdout/build.py (which runs one real
`python -c reference` process per case) is what generates the expected outputs in the first place.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

STDOUT_DIR = Path(__file__).resolve().parents[2] / "evals" / "stdout"
TASKS_DIR = STDOUT_DIR / "tasks"
TASK_PATHS = sorted(TASKS_DIR.glob("*.json"))
TASK_IDS = [p.stem for p in TASK_PATHS]
CATEGORIES = {"easy", "parsing", "algorithms", "formatting"}

# Reads {"source": str, "stdins": [str, ...]} on stdin; prints a JSON list of [stdout, error-or-null] per case.
DRIVER = r"""
import io, json, sys, traceback
job = json.load(sys.stdin)
code = compile(job["source"], "<main.py>", "exec")
real_in, real_out = sys.stdin, sys.stdout
results = []
for data in job["stdins"]:
    sys.stdin = io.TextIOWrapper(io.BytesIO(data.encode("utf-8")), encoding="utf-8")
    out = io.BytesIO()
    sys.stdout = io.TextIOWrapper(out, encoding="utf-8")
    error = None
    try:
        exec(code, {"__name__": "__main__", "__builtins__": __builtins__})
    except SystemExit as exc:
        if exc.code not in (None, 0):
            error = "exit " + str(exc.code)
    except BaseException:
        error = traceback.format_exc()
    sys.stdout.flush()
    results.append([out.getvalue().decode("utf-8"), error])
    sys.stdin, sys.stdout = real_in, real_out
print(json.dumps(results))
"""


def load(task_id: str) -> dict:
    return json.loads((TASKS_DIR / f"{task_id}.json").read_text(encoding="utf-8"))


def cases(task: dict) -> list[dict]:
    return [task["example"], *task["hidden"]]


def run_all(source: str, task: dict) -> list[list]:
    job = json.dumps({"source": source, "stdins": [c["stdin"] for c in cases(task)]})
    timeout = task["time_limit"] * len(cases(task)) + 10
    proc = subprocess.run(
        [sys.executable, "-c", DRIVER], input=job, check=False, capture_output=True, text=True, timeout=timeout
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_enough_tasks():
    assert len(TASK_IDS) >= 60


def test_ids_unique_and_match_filenames():
    ids = [load(t)["id"] for t in TASK_IDS]
    assert ids == TASK_IDS
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_task_schema(task_id):
    task = load(task_id)
    assert set(task) == {"id", "prompt", "example", "hidden", "reference", "time_limit", "tags"}
    assert re.fullmatch(r"s\d{3}_[a-z0-9_]+", task["id"])
    assert isinstance(task["prompt"], str) and len(task["prompt"]) > 20
    assert isinstance(task["reference"], str) and task["reference"].endswith("\n")
    assert 1 <= len(task["reference"].strip().splitlines()) <= 25
    assert isinstance(task["time_limit"], (int, float)) and not isinstance(task["time_limit"], bool)
    assert task["time_limit"] > 0
    assert isinstance(task["tags"], list) and all(isinstance(t, str) for t in task["tags"])
    assert task["tags"] and task["tags"][0] in CATEGORIES
    assert isinstance(task["hidden"], list) and 3 <= len(task["hidden"]) <= 5
    for case in cases(task):
        assert isinstance(case, dict) and set(case) == {"stdin", "stdout"}
        assert isinstance(case["stdin"], str) and isinstance(case["stdout"], str)
    stdins = [c["stdin"] for c in cases(task)]
    assert len(set(stdins)) == len(stdins), "duplicate case"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_reference_matches_expected(task_id):
    task = load(task_id)
    results = run_all(task["reference"], task)
    for i, (case, (out, error)) in enumerate(zip(cases(task), results)):
        assert error is None, f"case {i}: {error}"
        assert out == case["stdout"], f"case {i} (stdin {case['stdin'][:60]!r})"


@pytest.mark.parametrize("task_id", TASK_IDS)
def test_empty_program_fails(task_id):
    task = load(task_id)
    results = run_all("", task)
    assert any(out != case["stdout"] for case, (out, _) in zip(cases(task), results))


def test_slice20():
    lines = (STDOUT_DIR / "slice20.txt").read_text(encoding="utf-8").split()
    assert len(lines) == 20 and len(set(lines)) == 20
    assert set(lines) <= set(TASK_IDS)
    assert {load(t)["tags"][0] for t in lines} == CATEGORIES
