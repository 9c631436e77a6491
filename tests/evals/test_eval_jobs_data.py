"""The `jobs` eval suite (evals/jobs/<id>/: repo/, job.json, hidden/) is consistent.

Each check runs pytest for real, in a subprocess, on a copy of the job's repo under tmp_path.
"""

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

JOBS_DIR = Path(__file__).resolve().parents[2] / "evals" / "jobs"
JOB_DIRS = sorted(p.parent for p in JOBS_DIR.glob("*/job.json"))
JOBS = {d.name: json.loads((d / "job.json").read_text(encoding="utf-8")) for d in JOB_DIRS}
FIX_IDS = [name for name, job in JOBS.items() if job.get("mode") == "fix"]
ADD_IDS = [name for name, job in JOBS.items() if job.get("mode") == "add"]
KEYS = {
    "fix": {"name", "mode", "task", "seed", "check"},
    "add": {"name", "mode", "task", "hidden_test", "reference"},
}


def copy_repo(job_id: str, tmp_path: Path) -> Path:
    dest = tmp_path / job_id
    ignore = shutil.ignore_patterns("__pycache__", ".pytest_cache", "*.pyc")
    shutil.copytree(JOBS_DIR / job_id / "repo", dest, ignore=ignore)
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
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},  # plain-stdlib repos; plugins only cost time
    )
    out = proc.stdout + proc.stderr
    failed = {line.split()[1] for line in out.splitlines() if line.startswith("FAILED ")}
    return proc.returncode, failed, out


def summary_line(out: str) -> str:
    return out.strip().splitlines()[-1]


def apply_edits(repo: Path, edits: list[dict]) -> None:
    """Apply exact-text replacements; an empty `find` creates the file (which must not exist yet)."""
    for edit in edits:
        path = repo / edit["path"]
        if edit["find"] == "":
            assert not path.exists(), f"{edit['path']} already exists"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(edit["replace"], encoding="utf-8")
            continue
        text = path.read_text(encoding="utf-8")
        assert text.count(edit["find"]) == 1, f"{edit['find']!r} occurs {text.count(edit['find'])} times"
        path.write_text(text.replace(edit["find"], edit["replace"]), encoding="utf-8")


def edits_of(job: dict) -> list[dict]:
    return job["seed"] if job["mode"] == "fix" else job["reference"]


def test_at_least_eight_jobs_of_both_modes():
    assert len(JOBS) >= 8
    assert len(FIX_IDS) >= 5 and len(ADD_IDS) >= 3
    assert len(FIX_IDS) + len(ADD_IDS) == len(JOBS)


@pytest.mark.parametrize("job_id", sorted(JOBS))
def test_job_schema_and_repo_layout(job_id):
    job, job_dir = JOBS[job_id], JOBS_DIR / job_id
    assert job["name"] == job_id
    assert job["mode"] in KEYS
    assert set(job) == KEYS[job["mode"]]
    assert isinstance(job["task"], str)
    edits = edits_of(job)
    assert isinstance(edits, list) and edits
    for edit in edits:
        assert set(edit) == {"path", "find", "replace"}
        assert all(isinstance(edit[key], str) for key in edit)
        assert edit["replace"] != edit["find"]
        assert not edit["path"].startswith(("tests/", "/")) and ".." not in edit["path"]
    if job["mode"] == "fix":
        assert job["task"] == ""
        assert set(job["check"]) == {"tests_pass"}
        tests = job["check"]["tests_pass"]
        assert isinstance(tests, list) and 1 <= len(tests) <= 2
        for test_id in tests:
            file, _, name = test_id.partition("::")
            assert file.startswith("tests/") and name.startswith("test_"), test_id
            assert f"def {name}(" in (job_dir / "repo" / file).read_text(encoding="utf-8"), test_id
    else:
        assert len(job["task"].strip()) > 40
        assert job["hidden_test"].startswith("hidden/test_") and job["hidden_test"].endswith(".py")
        assert (job_dir / job["hidden_test"]).is_file()
    repo = job_dir / "repo"
    ini = tomllib.loads((repo / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["pytest"]["ini_options"]
    assert ini == {"testpaths": ["tests"], "pythonpath": ["."]}
    assert not (repo / "tests" / "__init__.py").exists()
    test_count = sum(
        line.startswith("def test_")
        for path in (repo / "tests").glob("test_*.py")
        for line in path.read_text(encoding="utf-8").splitlines()
    )
    assert 5 <= test_count <= 15


@pytest.mark.parametrize("job_id", sorted(JOBS))
def test_every_find_occurs_exactly_once(job_id):
    job = JOBS[job_id]
    for edit in edits_of(job):
        path = JOBS_DIR / job_id / "repo" / edit["path"]
        if edit["find"] == "":
            assert job["mode"] == "add" and not path.exists(), edit["path"]
        else:
            assert path.read_text(encoding="utf-8").count(edit["find"]) == 1, edit


@pytest.mark.parametrize("job_id", sorted(JOBS))
def test_clean_suite_is_green(job_id, tmp_path):
    code, failed, out = run_pytest(copy_repo(job_id, tmp_path))
    assert code == 0 and not failed, out
    assert " passed" in summary_line(out), out


@pytest.mark.parametrize("job_id", FIX_IDS)
def test_fix_seed_breaks_exactly_the_named_tests(job_id, tmp_path):
    job = JOBS[job_id]
    repo = copy_repo(job_id, tmp_path)
    named = set(job["check"]["tests_pass"])
    apply_edits(repo, job["seed"])
    code, failed, out = run_pytest(repo)
    assert code == 1, out  # tests failed; not a collection or usage error
    assert "error" not in summary_line(out), out
    assert named <= failed, out
    assert len(failed - named) <= 1, out
    assert " passed" in summary_line(out), out
    assert "AssertionError" in out or "assert " in out, out


@pytest.mark.parametrize("job_id", ADD_IDS)
def test_hidden_test_fails_clean_and_passes_with_reference(job_id, tmp_path):
    job = JOBS[job_id]
    repo = copy_repo(job_id, tmp_path)
    hidden = JOBS_DIR / job_id / job["hidden_test"]
    target = repo / "tests" / hidden.name
    assert not target.exists()
    shutil.copy(hidden, target)
    rel = f"tests/{hidden.name}"
    code, failed, out = run_pytest(repo, rel)
    assert code == 1 and failed, out  # collected and failing, not a collection error
    assert all(test_id.startswith(rel + "::") for test_id in failed), out
    assert " passed" not in summary_line(out) and "error" not in summary_line(out), out
    apply_edits(repo, job["reference"])
    code, failed, out = run_pytest(repo)
    assert code == 0 and not failed, out
