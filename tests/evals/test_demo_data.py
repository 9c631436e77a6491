"""The demo repo (demo/orders) and its four first-run jobs (demo/jobs.json) are consistent.

Each check runs pytest for real, in a subprocess, on a copy of demo/orders under tmp_path.
"""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[2] / "demo"
ORDERS = DEMO / "orders"
JOBS = json.loads((DEMO / "jobs.json").read_text(encoding="utf-8"))
BY_NAME = {job["name"]: job for job in JOBS}


def copy_repo(tmp_path: Path) -> Path:
    dest = tmp_path / "orders"
    shutil.copytree(ORDERS, dest, ignore=shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc"))
    return dest


def run_pytest(repo: Path, *args: str) -> tuple[int, set[str], str]:
    """Run pytest in `repo`; return the exit code, the ids of the failed tests and the output."""
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rf", *args],
        check=False,
        cwd=repo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = proc.stdout + proc.stderr
    failed = {line.split()[1] for line in out.splitlines() if line.startswith("FAILED ")}
    return proc.returncode, failed, out


def apply_edits(repo: Path, edits: list[dict], reverse: bool = False) -> None:
    """Apply exact-text replacements; an empty `find` creates the file (which must not exist yet)."""
    for edit in edits:
        path = repo / edit["path"]
        find, replace = (edit["replace"], edit["find"]) if reverse else (edit["find"], edit["replace"])
        if edit["find"] == "":
            if reverse:
                path.unlink()
                continue
            assert not path.exists(), f"{edit['path']} already exists"
            path.write_text(replace, encoding="utf-8")
            continue
        text = path.read_text(encoding="utf-8")
        assert text.count(find) == 1, f"{find!r} occurs {text.count(find)} times in {edit['path']}"
        path.write_text(text.replace(find, replace), encoding="utf-8")


def test_four_jobs_one_per_mode():
    assert [job["mode"] for job in JOBS] == ["ask", "fix", "add", "run"]
    assert [job["name"] for job in JOBS] == ["ask", "fix", "add", "run"]
    for job in JOBS:
        assert job["mode"] == "fix" or job["task"].strip()


@pytest.mark.parametrize("key", ["seed", "reference"])
def test_every_find_occurs_exactly_once(key):
    edits = [edit for job in JOBS for edit in job.get(key, [])]
    assert edits
    for edit in edits:
        path = ORDERS / edit["path"]
        if edit["find"] == "":
            assert key == "reference" and not path.exists(), edit["path"]
        else:
            assert path.read_text(encoding="utf-8").count(edit["find"]) == 1, edit


def test_clean_suite_passes(tmp_path):
    code, failed, out = run_pytest(copy_repo(tmp_path))
    assert code == 0 and not failed, out
    assert " passed" in out


def test_ask_answer_is_in_the_named_file():
    check = BY_NAME["ask"]["check"]
    (path,) = check["answer_contains_all"]
    text = (ORDERS / path).read_text(encoding="utf-8")
    assert any(s in text for s in check["answer_contains_any"])
    # the rate is distinctive: no other source file of the package mentions it
    others = [p for p in (ORDERS / "orders").glob("*.py") if p != ORDERS / path]
    assert not [p for p in others if any(s in p.read_text(encoding="utf-8") for s in check["answer_contains_any"])]


def test_fix_seed_breaks_exactly_the_named_tests(tmp_path):
    job = BY_NAME["fix"]
    repo = copy_repo(tmp_path)
    named = set(job["check"]["tests_pass"])
    apply_edits(repo, job["seed"])
    code, failed, out = run_pytest(repo)
    assert code == 1, out
    assert named <= failed, out
    assert len(failed - named) <= 1, out
    assert "AssertionError" in out or "assert " in out
    apply_edits(repo, job["seed"], reverse=True)
    code, failed, out = run_pytest(repo)
    assert code == 0 and not failed, out


@pytest.mark.parametrize("name", ["add", "run"])
def test_hidden_test_fails_clean_and_passes_with_reference(tmp_path, name):
    job = BY_NAME[name]
    repo = copy_repo(tmp_path)
    hidden = DEMO / job["hidden_test"]
    target = repo / "tests" / hidden.name
    assert not target.exists()
    shutil.copy(hidden, target)
    rel = f"tests/{hidden.name}"
    code, failed, out = run_pytest(repo, rel)
    assert code == 1 and failed, out  # collected and failing, not a collection error
    assert all(test_id.startswith(rel + "::") for test_id in failed)
    apply_edits(repo, job["reference"])
    code, failed, out = run_pytest(repo)
    assert code == 0 and not failed, out
