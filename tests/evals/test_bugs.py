"""The real-bugs suite: mining a fix commit, rebuilding the seed from two releases, the sha checks, the project venv's
python running the tests, `--check` dropping an unsound job, and the committed manifest's invariants. No network:
the releases are trees the tests write, the venvs are made from ph's own environment or from wheels built here."""

import hashlib
import importlib.util
import json
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyharness.cli.main import app
from pyharness.errors import UserError
from pyharness.evals import bugprojects, bugs
from pyharness.evals.bugs import BugJob, check, read_manifest
from pyharness.evals.projects import Project, unpack
from tests.venvkit import WITH_PYTEST, make_venv

ROOT = Path(__file__).resolve().parents[2]
SIZEFMT = "def fmt(n):\n    return f'{n} items'\n"
"""A stand-in dependency that only the project's venv has."""
OPS_V0 = '''import sizefmt


def total(items):
    """Sum of the items."""
    result = 0
    for item in items[1:]:
        result += item
    return result


def label(items):
    return sizefmt.fmt(len(items))
'''
OPS_FIX = OPS_V0.replace("in items[1:]:", "in items:")
OPS_V1 = OPS_FIX + '''

def mean(items):
    return total(items) / len(items)
'''
TEST_V0 = '''from calc.ops import label, total


def test_total():
    assert total([]) == 0


def test_label():
    assert label([1, 2]) == "2 items"
'''
TEST_FIX = TEST_V0 + '''

def test_total_counts_the_first_item():
    assert total([5, 1]) == 6
'''
TEST_V1 = TEST_FIX.replace("import label, total", "import label, mean, total") + '''

def test_mean():
    assert mean([0, 4]) == 2
'''


def _build_script():
    spec = importlib.util.spec_from_file_location("bugs_build", ROOT / "evals" / "bugs" / "build.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _commit(repo: Path, files: dict[str, str], message: str, tag: str | None = None) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", message], check=True)
    if tag:
        subprocess.run([*git, "tag", tag], check=True)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A history (bug released in 1.0, fixed with a regression test, a later change, 1.1 released), its two releases
    as unpacked sdists in a bugs cache, and a venv holding pytest and the dependency."""
    base = tmp_path_factory.mktemp("bugs")
    repo = base / "history"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    _commit(repo, {"calc/__init__.py": "", "calc/ops.py": OPS_V0, "tests/test_ops.py": TEST_V0}, "Start", "1.0")
    _commit(repo, {"calc/ops.py": OPS_FIX, "tests/test_ops.py": TEST_FIX}, "Fix total skipping the first item")
    _commit(repo, {"calc/ops.py": OPS_V1, "tests/test_ops.py": TEST_V1}, "Add mean", "1.1")
    cache = base / "cache" / "bugs"
    releases = {}
    for version, ops, test in (("1.0", OPS_V0, TEST_V0), ("1.1", OPS_V1, TEST_V1)):
        top = base / "src" / f"calcbug-{version}"
        for rel, text in {"calc/__init__.py": "", "calc/ops.py": ops, "tests/test_ops.py": test}.items():
            (top / rel).parent.mkdir(parents=True, exist_ok=True)
            (top / rel).write_text(text)
        archive = base / f"calcbug-{version}.tar.gz"
        with tarfile.open(archive, "w:gz") as sdist:
            sdist.add(top, arcname=top.name)
        releases[version] = hashlib.sha256(archive.read_bytes()).hexdigest()
        unpack(archive, Project("calcbug", version, releases[version], "MIT", (), 0), cache)
    spec = bugprojects.BugProject("calcbug", "MIT", "https://example.invalid/calcbug", "test", ("sizefmt==1.0",), (),
                                  releases)
    venv = bugprojects.venv_dir(spec, cache)
    python = make_venv(venv, WITH_PYTEST, {"sizefmt": SIZEFMT})
    (venv / ".ph-complete").write_text("made by the test\n")
    return {"repo": repo, "cache": cache, "spec": spec, "python": str(python), "base": base}


@pytest.fixture(scope="module")
def mined(project):
    """The job the build script mines from the fixture history."""
    build = _build_script()
    found = build.candidates(project["repo"], "1.0", "1.1")
    assert [c.subject for c in found] == ["Fix total skipping the first item"]  # 'Add mean' is no fix
    cand = found[0]
    cand.v0, cand.v1 = "1.0", "1.1"
    t0, t1 = project["cache"] / "calcbug-1.0", project["cache"] / "calcbug-1.1"
    hunks = build.locate(cand, project["repo"], t0, t1)
    assert hunks == [bugs.Hunk("calc/ops.py", (6, 7), (6, 7))]
    job = build.judge("calcbug", cand, hunks, ["tests/test_ops.py"], t0, t1, project["python"],
                      repo_url=project["spec"].repository, clean_runs={})
    assert job is not None
    job.split = "test"
    return job


def _loaded(job: BugJob, project) -> BugJob:
    copy = BugJob(**job.to_json())
    copy.root, copy.old_root = project["cache"] / "calcbug-1.1", project["cache"] / "calcbug-1.0"
    copy.python = project["python"]
    return copy


def test_the_build_keeps_the_fix_and_records_no_code(mined):
    assert mined.failing == ["tests/test_ops.py::test_total_counts_the_first_item"]
    assert mined.source["subject"] == "Fix total skipping the first item"
    assert (mined.source["hunks"], mined.source["added"], mined.source["removed"]) == (1, 1, 1)
    assert not mined.multi
    assert "items" not in json.dumps(mined.to_json()).replace("first item", "")  # coordinates, never code


def test_make_repo_rebuilds_the_seed_from_the_older_release(mined, project, tmp_path):
    job = _loaded(mined, project)
    repo = job.make_repo(tmp_path / "repo")
    ops = (repo / "calc" / "ops.py").read_text()
    assert ops == OPS_V1.replace("in items:", "in items[1:]:")  # the release tree (mean is in it), the fix reverted
    assert (repo / "tests" / "test_ops.py").read_text() == TEST_V1
    assert subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout == ""
    ok, note = job.score(repo, job.test_hashes())
    assert not ok and note == "tests/test_ops.py: 1 failed, 3 passed"
    (repo / "calc" / "ops.py").write_text(OPS_V1)
    left = job.left(repo, job.test_hashes())
    assert left["green"] and left["note"] == "tests/test_ops.py: 4 passed"
    assert left["changed"] == ["calc/ops.py"] and left["before"] == 1 and not left["worse"]


def test_the_seed_refuses_releases_that_are_not_the_pinned_files(mined, project, tmp_path):
    job = _loaded(mined, project)
    job.clean_sha256 = {"calc/ops.py": "0" * 64}
    with pytest.raises(UserError, match="not the file the job was built on"):
        job.make_repo(tmp_path / "a")
    assert check(job)[0] is False
    job = _loaded(mined, project)
    job.hunks = [bugs.Hunk("calc/ops.py", (6, 7), (5, 6))]  # the wrong lines of the older release
    with pytest.raises(UserError, match="seeded calc/ops.py is not the one the job was built with"):
        job.make_repo(tmp_path / "b")


def test_the_projects_venv_runs_the_tests(mined, project):
    job = _loaded(mined, project)
    ok, note = check(job)
    assert ok, note
    assert note == "seeded: 1 failed, 3 passed; fixed: 4 passed"
    job.python = None  # ph's own python lacks the dependency: the fixed tree cannot be green
    ok, note = check(job)
    assert not ok and note.startswith("the fixed tree is not green")


def test_check_drops_a_job_whose_seed_fails_other_tests_than_listed(mined, project):
    job = _loaded(mined, project)
    job.failing = ["tests/test_ops.py::test_mean"]
    ok, note = check(job)
    assert not ok and note.startswith("the seeded tree does not fail exactly the 1 listed tests")


def _manifest(path: Path, project, jobs: list[BugJob]) -> Path:
    spec = project["spec"]
    path.write_text(json.dumps({"projects": {spec.name: {
        "license": spec.license, "repository": spec.repository, "split": spec.split, "deps": list(spec.deps),
        "test_deps": [], "releases": spec.releases}}, "jobs": [j.to_json() for j in jobs]}))
    return path


def test_cli_check_counts_sound_jobs_and_drops_an_unsound_one(mined, project, tmp_path, monkeypatch):
    unsound = BugJob(**{**mined.to_json(), "id": "calcbug-nofail", "failing": ["tests/test_ops.py::test_mean"]})
    manifest = _manifest(tmp_path / "jobs.json", project, [mined, unsound])
    monkeypatch.setattr(bugs, "manifest_path", lambda: manifest)
    monkeypatch.setenv("PH_CACHE_DIR", str(project["cache"].parent))
    done = CliRunner().invoke(app, ["eval", "bugs:all", "--check"])
    assert done.exit_code == 1, done.output
    assert "excluded calcbug-nofail: the seeded tree does not fail exactly the 1 listed tests" in done.stderr
    assert "check: 1/2 tasks sound, 1 excluded" in done.stdout
    assert "calcbug (test): 1 jobs" in done.stdout
    assert ("sound jobs: 1 from 1 projects, 1 with dependencies; multi-line or multi-hunk: 0 (0%); split: test 1"
            in done.stdout)
    assert "dropped: 1 (seeded failing differs 1)" in done.stdout


def _wheel(folder: Path, name: str, source: str) -> Path:
    """A pure-Python wheel of one module, installable with no index."""
    info = f"{name}-1.0.dist-info"
    files = {f"{name}.py": source, f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
             f"{info}/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    path = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as wheel:
        for rel, text in files.items():
            wheel.writestr(rel, text)
        wheel.writestr(f"{info}/RECORD", "".join(f"{rel},,\n" for rel in [*files, f"{info}/RECORD"]))
    return path


def test_a_project_venv_is_built_once_with_its_requirements_and_reused(tmp_path, monkeypatch):
    dep = _wheel(tmp_path, "sizefmt", SIZEFMT)
    monkeypatch.setattr(bugprojects, "PYTEST", str(_wheel(tmp_path, "notpytest", "")))
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    spec = bugprojects.BugProject("calcbug", "MIT", "", "dev", (str(dep),))
    python = bugprojects.venv_python(spec, tmp_path / "cache")
    done = subprocess.run([python, "-c", "import sizefmt, notpytest; print(sizefmt.fmt(2))"], capture_output=True,
                          text=True)
    assert done.stdout == "2 items\n", done.stderr
    marker = Path(python).parents[1] / ".ph-complete"
    assert marker.read_text().splitlines() == spec.requirements
    marker.write_text("kept\n")
    assert bugprojects.venv_python(spec, tmp_path / "cache") == python  # reused, not rebuilt
    assert marker.read_text() == "kept\n"


def test_the_committed_manifest_meets_the_issue():
    projects, jobs = read_manifest(ROOT / "evals" / "bugs" / "jobs.json")
    assert len(jobs) >= 120 and len({j.id for j in jobs}) == len(jobs)
    used = {j.project for j in jobs}
    assert len(used) >= 8 and used <= set(projects)
    assert sum(1 for name in used if projects[name].deps) >= 4
    assert sum(j.multi for j in jobs) >= 0.4 * len(jobs)
    assert all(j.split == projects[j.project].split for j in jobs)  # split by project
    assert {projects[name].split for name in used} == {"dev", "test"}
    for job in jobs:
        assert job.failing and job.tests and job.hunks
        assert {h.file for h in job.hunks} == set(job.clean_sha256) == set(job.seeded_sha256)
        assert {job.old, job.new} <= set(projects[job.project].releases)
        assert set(job.source) == {"repository", "commit", "subject", "hunks", "added", "removed", "changed_lines"}
        assert job.source["hunks"] == len(job.hunks) and 1 <= job.source["changed_lines"] <= 30
    text = (ROOT / "evals" / "bugs" / "jobs.json").read_text()
    # names, ids, numbers and hashes: no code was committed
    assert all("\n" not in s and len(s) <= 200 for s in _strings(json.loads(text)))


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
