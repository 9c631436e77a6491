"""The mutant suite: single-site mutations, sound-job building and checking, fetching, scoring — no network."""

import dataclasses
import hashlib
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from pyharness.errors import UserError
from pyharness.evals.mutants import MutantJob, build, check, judging_test_file, local_jobs, split_of
from pyharness.evals.mutate import OPERATORS, mutate, sites
from pyharness.evals.projects import Project, fetch, unpack

FIXTURE = Path(__file__).parents[1] / "data" / "mutant_project"
SOURCE = '''def f(a, b=3):
    """Doc 5."""
    if a < b and not a or a is not None:
        return a.strip()[1:] + 2 * b
    for i in range(len(a)):
        pass
    return True
'''


def test_each_site_changes_one_thing_and_nothing_else():
    found = sites(SOURCE)
    assert {s.operator for s in found} == set(OPERATORS)
    for site in found:
        new = mutate(SOURCE, site.index)
        changed = [(o, n) for o, n in zip(SOURCE.splitlines(), new.splitlines()) if o != n]
        assert len(changed) == 1, site
        assert changed[0][0] == SOURCE.splitlines()[site.line - 1]
    assert '"""Doc 5."""' in mutate(SOURCE, 0)  # docstrings are not sites


def test_sites_are_deterministic_and_out_of_range_is_an_error():
    assert sites(SOURCE) == sites(SOURCE)
    assert mutate(SOURCE, 2) == mutate(SOURCE, 2)
    with pytest.raises(ValueError):
        mutate(SOURCE, len(sites(SOURCE)))


def test_test_file_by_the_usual_layouts(tmp_path):
    (tmp_path / "pkg" / "tests").mkdir(parents=True)
    (tmp_path / "pkg" / "tests" / "test_a.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_b.py").write_text("")
    assert judging_test_file(tmp_path, "pkg/a.py") == "pkg/tests/test_a.py"
    assert judging_test_file(tmp_path, "pkg/b.py") == "tests/test_b.py"
    assert judging_test_file(tmp_path, "pkg/c.py") is None


@pytest.fixture(scope="module")
def fixture_jobs():
    return local_jobs(FIXTURE, per_module=3)


def test_local_project_gives_sound_jobs(fixture_jobs):
    assert len(fixture_jobs) == 3
    for job in fixture_jobs:
        assert job.file == "calc/ops.py" and job.tests == ["tests/test_ops.py"]
        assert job.failing and all(f.startswith("tests/test_ops.py::") for f in job.failing)
        assert job.split in ("dev", "test") and job.split == split_of(job.id)
        ok, note = check(job)
        assert ok, note
        assert "reverse: 4 passed" in note


def test_make_repo_applies_the_mutant_and_score_judges_it(fixture_jobs, tmp_path):
    job = fixture_jobs[0]
    repo = job.make_repo(tmp_path / "repo")
    original = (FIXTURE / job.file).read_text()
    mutated = (repo / job.file).read_text()
    assert mutated != original and mutated == mutate(original, job.site)
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
    ok, note = job.score(repo, job.test_hashes())
    assert not ok and "failed" in note
    left = job.left(repo, job.test_hashes())  # the mutant as it was: not worse
    assert (left["failing"], left["before"], left["worse"]) == (len(job.failing), len(job.failing), False)
    assert left["changed"] == []  # the pytest run's caches and ph's records are not the run's changes
    drawn = dataclasses.replace(job, failing=[])  # as if a test on random data passed when the job was built
    left = drawn.left(repo, job.test_hashes())
    assert left["failing"] > left["before"] == 0 and left["worse"] is False  # nothing changed: the mutant itself
    (repo / job.file).write_text(mutated + "\ndef broken(:\n")  # the tests no longer collect: worse
    (repo / ".ph" / "runs").mkdir(parents=True)
    (repo / ".ph" / "runs" / "r.jsonl").write_text("{}\n")
    (repo / "calc" / "new.py").write_text("x = 1\n")
    left = job.left(repo, job.test_hashes())
    assert left["worse"] is True and left["changed"] == ["calc/new.py", job.file]
    (repo / "calc" / "new.py").unlink()
    (repo / job.file).write_text(mutated.replace("return", "raise ValueError() or"))  # every test fails: worse
    left = job.left(repo, job.test_hashes())
    assert left["failing"] == 4 > len(job.failing) and left["worse"] is True
    (repo / job.file).write_text(original)
    assert job.score(repo, job.test_hashes()) == (True, "tests/test_ops.py: 4 passed")
    (repo / "tests" / "test_ops.py").write_text("def test_nothing():\n    pass\n")  # a "fix" that edits the judge
    ok, note = job.score(repo, job.test_hashes())
    assert not ok and note == "test files changed: tests/test_ops.py"


def test_a_job_refuses_a_different_source(fixture_jobs, tmp_path):
    job = MutantJob(**{**fixture_jobs[0].to_json(), "source_sha256": "0" * 64})
    job.root = FIXTURE
    with pytest.raises(UserError, match="not the source the mutant was made from"):
        job.make_repo(tmp_path / "repo")
    assert check(job)[0] is False


def test_an_equivalent_mutant_is_not_kept(tmp_path):
    (tmp_path / "m.py").write_text("def f(x):\n    return x * 1\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_m.py").write_text("from m import f\n\ndef test_f():\n    assert f(0) == 0\n")
    assert build(tmp_path, "local:eq", (".",)) == []  # 1 -> 2 and * -> // both still give f(0) == 0


def _sdist(folder: Path, name: str, version: str) -> Path:
    """A real sdist-shaped archive of the fixture project."""
    path = folder / f"{name}-{version}.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        archive.add(FIXTURE, arcname=f"{name}-{version}")
    return path


def test_an_sdist_is_checked_against_its_pin_and_unpacked(tmp_path):
    archive = _sdist(tmp_path, "calcfixture", "1.0")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    tree = unpack(archive, Project("calcfixture", "1.0", digest, "MIT", ("calc",), 3), tmp_path / "cache")
    assert tree == tmp_path / "cache" / "calcfixture-1.0"
    assert (tree / "calc" / "ops.py").read_text() == (FIXTURE / "calc" / "ops.py").read_text()
    assert fetch(Project("calcfixture", "1.0", digest, "MIT", ("calc",), 3), cache=tmp_path / "cache") == tree
    with pytest.raises(UserError, match="sha256 is"):
        unpack(archive, Project("calcfixture", "1.0", "0" * 64, "MIT", ("calc",), 3), tmp_path / "other")
    assert not (tmp_path / "other" / "calcfixture-1.0").exists()


def test_a_project_that_cannot_be_fetched_is_a_one_line_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")  # no index and an empty links folder: nothing can be had
    monkeypatch.setenv("PIP_FIND_LINKS", str(tmp_path))
    with pytest.raises(UserError, match=r"cannot fetch nosuchproject-9\.9 \(pip download failed"):
        fetch(Project("nosuchproject", "9.9", "0" * 64, "MIT", ("x",), 1), cache=tmp_path / "cache")
    assert not (tmp_path / "cache" / "nosuchproject-9.9").exists()


def test_cli_check_from_a_local_project():
    done = subprocess.run([sys.executable, "-m", "pyharness.cli", "eval", "mutants", "--from", str(FIXTURE),
                           "--check"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "check: 4/4 tasks sound" in done.stdout
    assert "sound jobs: 4 from 1 projects, 0 in a large tree" in done.stdout


def test_the_committed_manifest_meets_the_issue():
    data = json.loads((Path(__file__).parents[2] / "evals" / "mutants" / "jobs.json").read_text())
    jobs = data["jobs"]
    assert len(jobs) >= 150 and len({j["project"] for j in jobs}) >= 3
    assert sum(j["large"] for j in jobs) >= 40
    assert sum(j["split"] == "test" for j in jobs) >= 60
    assert len({j["id"] for j in jobs}) == len(jobs)
    assert all(j["split"] == split_of(j["id"]) and j["failing"] for j in jobs)


def test_eval_runs_a_mutant_job_and_scores_it_on_its_own_tests(fixture_jobs, tmp_path):
    """ph eval mutants --from: a scripted model that sends the unmutated module back passes, scored by the
    project's own test file (a reply that leaves the mutant fails the same score: test_make_repo_...)."""
    job = fixture_jobs[0]
    original = (FIXTURE / job.file).read_text()
    replies = tmp_path / "replies"
    replies.mkdir()
    (replies / f"{job.id}.json").write_text(json.dumps([f"```python\n{original}```"] * 8))
    done = subprocess.run(
        [sys.executable, "-m", "pyharness.cli", "eval", "mutants", "--from", str(FIXTURE), "--tasks", job.id,
         "--model", f"scripted:{replies}", "--configs", "harness=on", "--max-steps", "4",
         "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "out" / "results.jsonl").read_text().splitlines()[0])
    assert record["task"] == job.id and record["pass_strict"] is True, record
    assert record["note"] == "tests/test_ops.py: 4 passed"
    assert record["left"] == {"failing": 0, "before": len(job.failing), "worse": False, "changed": [job.file]}


def test_the_job_lists_name_known_jobs_of_their_own_split():
    import json

    evals = Path(__file__).resolve().parents[2] / "evals" / "mutants"
    split = {j["id"]: j["split"] for j in json.loads((evals / "jobs.json").read_text())["jobs"]}
    lists = {p.name: [ln.split("#")[0].strip() for ln in p.read_text().splitlines() if ln.split("#")[0].strip()]
             for p in evals.glob("*.txt")}
    assert {"dev15.txt", "dev-toolz9.txt", "test60.txt"} <= set(lists)
    for name, ids in lists.items():
        wanted = "dev" if name.startswith("dev") else "test"
        assert ids and len(ids) == len(set(ids)) and {split.get(i) for i in ids} == {wanted}, name
    assert len(lists["test60.txt"]) == 60
