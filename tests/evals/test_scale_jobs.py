"""Your own suites (issue 26, item 5): a folder of job folders runs as a suite and `--check` validates it; a fix job
is scored as a mutant is (its judging test files whole and byte-identical), for harness=on and oneshot alike."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from scalekit import ADD, BREAKS_ANOTHER, FIX, FIXED, NOOP, REWRITES_TESTS, SQUARE, TESTS, write_job, write_replies

from pyharness.errors import UserError
from pyharness.evals.configs import parse_configs
from pyharness.evals.demo import check, make_repo
from pyharness.evals.oneshot_jobs import apply_reply
from pyharness.evals.runner import EvalPlan, Models, run_eval
from pyharness.evals.suites import load_suite
from pyharness.loop.runs import AgentConfig
from pyharness.runstate import RunResult
from pyharness.workspace import sandbox
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace


def ph_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", "eval", *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


def test_a_folder_of_job_folders_is_a_suite_named_after_it(tmp_path):
    suite_dir = tmp_path / "mine"
    for job in (FIX, ADD):
        write_job(suite_dir, job)
    (suite_dir / "broken").mkdir()
    (suite_dir / "broken" / "job.json").write_text('{"mode": "fix", "task": ""}', encoding="utf-8")
    suite = load_suite(str(suite_dir))
    assert suite.name == "mine" and [t.id for t in suite.tasks] == ["calc_add", "calc_fix"]
    fix = suite.tasks[1]
    assert (fix.root, fix.source, fix.job["mode"]) == (suite_dir / "calc_fix", suite_dir / "calc_fix" / "repo", "fix")
    assert suite.problems == [f"{suite_dir / 'broken' / 'job.json'}: the job folder has no repo/"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match="holds no task files \\(\\*.json\\) and no job folders"):
        load_suite(str(tmp_path / "empty"))


def test_check_names_the_job_whose_seeded_repo_already_passes(tmp_path):
    suite_dir = tmp_path / "mine"
    for job in (FIX, ADD, NOOP):
        write_job(suite_dir, job)
    proc = ph_eval(str(suite_dir), "--check", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "check: 2/3 tasks sound, 1 excluded" in proc.stdout
    [excluded] = [line for line in proc.stderr.splitlines() if line.startswith("excluded")]
    assert excluded == "excluded calc_noop: the unsolved job already passes its check: tests/test_ops.py: 3 passed"


def test_a_folder_of_jobs_runs_locally_with_a_scripted_model(tmp_path):
    suite_dir = tmp_path / "mine"
    for job in (FIX, ADD):
        write_job(suite_dir, job)
    replies = write_replies(tmp_path / "replies", {"calc_fix": [FIXED], "calc_add": [SQUARE]})
    proc = ph_eval(str(suite_dir), "--model", f"scripted:{replies}", "--configs", "protocol=oneshot",
                   "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    records = {r["task"]: r for r in map(json.loads, (tmp_path / "out" / "results.jsonl").read_text().splitlines())}
    assert set(records) == {"calc_fix", "calc_add"} and {r["suite"] for r in records.values()} == {"mine"}
    assert records["calc_fix"]["pass_strict"] and records["calc_fix"]["note"] == "tests/test_ops.py: 3 passed"
    assert records["calc_add"]["pass_strict"] and records["calc_add"]["note"].startswith("hidden check: 1 passed")
    assert "| calc_fix | 1/1 |" in (tmp_path / "out" / "summary.md").read_text()


def fix_eval(tmp_path: Path, reply: str) -> dict[str, dict]:
    """The fix job with one scripted reply, harness=on (its first search candidate) and oneshot: records by config."""
    suite = load_suite(str(write_job(tmp_path / "mine", FIX).parent))
    spec = f"scripted:{write_replies(tmp_path / 'replies', {'calc_fix': [reply]})}"
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["protocol=text,oneshot harness=on"]),
                    agent=AgentConfig(max_steps=1))
    return {r["config"]: r for r in run_eval(plan, tmp_path / "out", Models([spec]))}


def test_the_right_fix_passes_in_both_configurations(tmp_path):
    records = fix_eval(tmp_path, FIXED)
    assert set(records) == {"protocol=text harness=on", "protocol=oneshot"}
    for record in records.values():
        assert (record["pass_strict"], record["note"]) == (True, "tests/test_ops.py: 3 passed"), record


def test_a_fix_that_breaks_another_test_of_the_file_fails_though_the_listed_test_passes(tmp_path):
    repo = make_repo(tmp_path / "by-hand", FIX, source=write_job(tmp_path / "jobs", FIX) / "repo")
    assert apply_reply(Workspace(repo, protect_tests=True), "fix", BREAKS_ANOTHER, ["calc/ops.py"]) == ["calc/ops.py"]
    assert run_pytest(repo, FIX["check"]["tests_pass"]).green  # what the old score ran: it would have passed
    ok, note = check(FIX, repo, RunResult("done", "one reply"), source=tmp_path / "jobs" / "calc_fix" / "repo")
    assert (ok, note) == (False, "tests/test_ops.py: 1 failed, 2 passed")
    records = fix_eval(tmp_path / "eval", BREAKS_ANOTHER)
    oneshot, loop = records["protocol=oneshot"], records["protocol=text harness=on"]
    assert (oneshot["outcome"], oneshot["pass_strict"], oneshot["note"]) == \
        ("done", False, "tests/test_ops.py: 1 failed, 2 passed")
    assert loop["pass_strict"] is False and loop["outcome"] != "done"  # the loop's own rule refused it as well


def test_a_fix_whose_code_rewrites_a_test_file_fails(tmp_path, monkeypatch):
    monkeypatch.setattr(sandbox, "_ENABLED", False)  # with the sandbox the judge is mounted read-only: no write
    source = write_job(tmp_path / "jobs", FIX) / "repo"
    repo = make_repo(tmp_path / "by-hand", FIX, source=source)
    apply_reply(Workspace(repo, protect_tests=True), "fix", REWRITES_TESTS, ["calc/ops.py"])
    assert run_pytest(repo, FIX["check"]["tests_pass"]).green  # the old score: the listed test passes...
    assert (repo / "tests" / "test_ops.py").read_text() != TESTS  # ...while the code rewrote the judge
    repo = make_repo(tmp_path / "by-hand-2", FIX, source=source)
    (repo / "tests" / "test_ops.py").write_text(TESTS.replace("== 5", "== 6"), encoding="utf-8")
    assert check(FIX, repo, RunResult("done", "edited"), source=source) == \
        (False, "test files changed: tests/test_ops.py")
    records = fix_eval(tmp_path / "eval", REWRITES_TESTS)
    oneshot, loop = records["protocol=oneshot"], records["protocol=text harness=on"]
    # the oneshot's own run of the tests after its reply (is the tree worse?) ran the code first, sandbox off here
    assert (oneshot["outcome"], oneshot["pass_strict"], oneshot["note"]) == \
        ("done", False, "test files changed: tests/test_ops.py")
    assert loop["pass_strict"] is False and loop["outcome"] != "done"
