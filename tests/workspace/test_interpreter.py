"""The project's own Python (issue 37): which interpreter runs the repo's code, chosen from each source in order, and
`ph fix` on projects whose tests need their own environment: a dependency only in `.venv`, a src/ layout installed
editable, a pytest plugin, tox.ini configuration, and Python 3.8-3.13 for ph's in-process helpers."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyharness.cli.main import app
from pyharness.errors import UserError
from pyharness.workspace.interpreter import choose
from tests.runkit import LOOP_LAYERS, write_replies
from tests.venvkit import HYPOTHESIS, WITH_PYTEST, make_venv, other_python, pip_venv, site_packages

DEPENDENCY = 'def natural(size):\n    return f"{size / 1000:.1f} kB"\n'
"""A one-module stand-in for a real dependency (`sizefmt`), installed only in the project's venv."""
REPORT = '''"""Human-readable file-size reports."""

import sizefmt


def describe(name, size):
    return f"{name}: {sizefmt.natural(size)}"


def total(sizes):
    """The total of the sizes, ignoring negative entries (unknown sizes)."""
    result = 0
    for size in sizes:
        if size < 0:
            result += size
    return result
'''
TESTS = '''from sizes.report import describe, total


def test_describe():
    assert describe("a.txt", 1200) == "a.txt: 1.2 kB"


def test_total_skips_unknown():
    assert total([100, -1, 50]) == 150
'''
FIX = ('Thought: negative sizes are the unknown ones\nAction: edit {"path": "%s"}\n'
       "<<<<<<< SEARCH\n        if size < 0:\n=======\n        if size >= 0:\n>>>>>>> REPLACE")
DONE = "Action: done {}"


def git_commit(repo: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def sizes_project(repo: Path, *, src: bool = False, venv: str | None = ".venv", dists=WITH_PYTEST) -> Path:
    """The seeded project: `sizes/report.py` (its bug: negative sizes are added, the others skipped) importing a
    dependency that only its venv has; under src/ when `src`."""
    package = repo / ("src/sizes" if src else "sizes")
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "report.py").write_text(REPORT)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_report.py").write_text(TESTS)
    (repo / ".gitignore").write_text(".venv/\nvenv/\nenv/\n__pycache__/\n")
    if venv:
        make_venv(repo / venv, dists, {"sizefmt": DEPENDENCY})
    git_commit(repo)
    return repo


def ph_fix(repo: Path, tmp_path: Path, replies: list[str], *extra: str):
    model = write_replies(tmp_path / "replies.json", replies)
    return CliRunner().invoke(app, ["fix", "--repo", str(repo), "--model", f"scripted:{model}", "--layers",
                                    LOOP_LAYERS, "--max-steps", "6", *extra])


def transcript_start(repo: Path) -> dict:
    [path] = (repo / ".ph" / "runs").glob("*.jsonl")
    return json.loads(path.read_text().splitlines()[0])


# -- where the interpreter comes from, one test per source -----------------------------------------------------

@pytest.fixture
def venvs(tmp_path):
    """Three bare venvs (no packages) to choose between, and a repo."""
    made = {name: make_venv(tmp_path / name, dists=()) for name in ("named", "active", "conda")}
    repo = tmp_path / "repo"
    repo.mkdir()
    return repo, made


def test_a_typed_python_wins_over_every_other_source(venvs, monkeypatch):
    repo, made = venvs
    make_venv(repo / ".venv", dists=())
    monkeypatch.setenv("VIRTUAL_ENV", str(made["active"].parent.parent))
    chosen = choose(repo, (str(made["named"]), "--python"), need_pytest=False)
    assert (chosen.path, chosen.source) == (str(made["named"]), "--python")
    assert chosen.version == ".".join(map(str, sys.version_info[:3]))


def test_ph_python_in_the_environment_is_the_next_source(venvs, monkeypatch, tmp_path):
    repo, made = venvs
    make_venv(repo / ".venv", dists=WITH_PYTEST)
    monkeypatch.setenv("PH_PYTHON", str(made["named"]))
    monkeypatch.setenv("VIRTUAL_ENV", str(made["active"].parent.parent))
    done = CliRunner().invoke(app, ["config", "--repo", str(repo)])
    assert done.exit_code == 0, done.output
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("python"))
    assert "env PH_PYTHON" in line and str(made["named"]) in line and "no pytest" in line


def test_the_user_config_file_names_one_after_ph_python(venvs, monkeypatch):
    repo, made = venvs
    config = repo.parent / "config.toml"
    config.write_text(f'python = "{made["named"]}"\n')
    monkeypatch.setenv("PH_CONFIG", str(config))
    monkeypatch.setenv("VIRTUAL_ENV", str(made["active"].parent.parent))
    done = CliRunner().invoke(app, ["config", "--repo", str(repo)])
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("python"))
    assert "user config" in line and str(made["named"]) in line
    monkeypatch.setenv("PH_PYTHON", str(made["conda"]))
    done = CliRunner().invoke(app, ["config", "--repo", str(repo)])
    assert str(made["conda"]) in next(ln for ln in done.stdout.splitlines() if ln.startswith("python"))


@pytest.mark.parametrize("variable", ["VIRTUAL_ENV", "CONDA_PREFIX"])
def test_an_active_environment_wins_over_the_repos_venv(venvs, monkeypatch, variable):
    repo, made = venvs
    make_venv(repo / ".venv", dists=())
    monkeypatch.setenv(variable, str(made["active"].parent.parent))
    chosen = choose(repo, need_pytest=False)
    assert (chosen.path, chosen.source) == (str(made["active"]), variable)


def test_the_venv_ph_itself_runs_in_is_not_the_projects(venvs, monkeypatch):
    repo, _ = venvs
    inside = make_venv(repo / ".venv", dists=())
    monkeypatch.setenv("VIRTUAL_ENV", sys.prefix)
    chosen = choose(repo, need_pytest=False)
    assert (chosen.path, chosen.source) == (str(inside), "the repo's .venv/")


@pytest.mark.parametrize("folder", [".venv", "venv", "env"])
def test_a_venv_inside_the_repo_is_found_by_its_pyvenv_cfg(venvs, folder):
    repo, _ = venvs
    inside = make_venv(repo / folder, dists=())
    chosen = choose(repo, need_pytest=False)
    assert (chosen.path, chosen.source) == (str(inside), f"the repo's {folder}/")


def test_without_any_source_it_is_phs_own_and_a_folder_without_pyvenv_cfg_is_no_venv(venvs):
    repo, _ = venvs
    (repo / "env" / "bin").mkdir(parents=True)
    shutil.copy(sys.executable, repo / "env" / "bin" / "python")  # a python, but not a venv
    chosen = choose(repo)
    assert (chosen.path, chosen.source, chosen.own) == (sys.executable, "ph's own", True)
    assert chosen.pytest


def test_a_repo_may_not_choose_the_interpreter(venvs):
    repo, made = venvs
    (repo / "pyproject.toml").write_text(f'[tool.ph]\npython = "{made["named"]}"\n')
    done = CliRunner().invoke(app, ["config", "--repo", str(repo)])
    assert "ignoring [tool.ph] python" in done.stderr
    line = next(ln for ln in done.stdout.splitlines() if ln.startswith("python"))
    assert str(made["named"]) not in line and "ph's own" in line


def test_a_python_that_is_not_there_is_one_line(tmp_path):
    with pytest.raises(UserError, match=r"^--python: /nowhere/python is not a file"):
        choose(tmp_path, ("/nowhere/python", "--python"))
    done = CliRunner().invoke(app, ["fix", "--repo", str(tmp_path), "--python", "/nowhere/python"])
    assert done.exit_code == 1 and done.stderr.count("\n") == 1 and "/nowhere/python is not a file" in done.stderr


# -- ph fix in projects with their own environment ---------------------------------------------------------------

def test_a_repo_venv_without_pytest_gets_one_line_naming_the_install_command_and_nothing_runs(tmp_path):
    repo = sizes_project(tmp_path / "repo", dists=())
    before = (repo / "sizes" / "report.py").read_text()
    done = ph_fix(repo, tmp_path, [FIX % "sizes/report.py", DONE])
    python = repo / ".venv" / "bin" / "python"
    assert done.exit_code == 1
    assert done.stderr == (f"ph: {python} (from the repo's .venv/) has no pytest, which runs the repo's tests: "
                           f"install it with `{python} -m pip install pytest`\n")
    assert not (repo / ".ph" / "runs").exists() and (repo / "sizes" / "report.py").read_text() == before


def test_ph_fix_runs_the_tests_with_the_repos_venv_and_fixes_the_bug(tmp_path):
    repo = sizes_project(tmp_path / "repo")
    own = subprocess.run([sys.executable, "-c", "import sizefmt"], capture_output=True, cwd=repo)
    assert own.returncode != 0  # ph's own interpreter cannot run these tests at all
    done = ph_fix(repo, tmp_path, [FIX % "sizes/report.py", DONE])
    python = repo / ".venv" / "bin" / "python"
    assert done.exit_code == 0, done.output
    assert f"python: {python} (Python " in done.stderr and "from the repo's .venv/" in done.stderr
    assert "if size >= 0:" in (repo / "sizes" / "report.py").read_text()
    start = transcript_start(repo)
    assert start["python"].startswith(f"python: {python} (Python ") and "pytest " in start["python"]


def test_ph_doctor_in_the_repo_names_its_venv_python(tmp_path):
    repo = sizes_project(tmp_path / "repo")
    done = CliRunner().invoke(app, ["doctor", "--repo", str(repo), "--json"])
    checks = {c["name"]: c for c in json.loads(done.stdout)["checks"]}
    line = checks["repo python"]
    assert line["ok"] and line["note"].startswith(f"{repo / '.venv' / 'bin' / 'python'} (Python ")
    assert "pytest " in line["note"] and "from the repo's .venv/" in line["note"]


def test_a_src_layout_installed_editable_passes_ph_fix(tmp_path):
    repo = sizes_project(tmp_path / "repo", src=True)
    (site_packages(repo / ".venv") / "__editable__.sizes-0.1.pth").write_text(str(repo / "src") + "\n")
    done = ph_fix(repo, tmp_path, [FIX % "src/sizes/report.py", DONE])
    assert done.exit_code == 0, done.output
    assert "if size >= 0:" in (repo / "src" / "sizes" / "report.py").read_text()


def test_a_scratch_copy_tests_its_own_code_not_the_editable_install(tmp_path):
    from pyharness.workspace.testrun import run_pytest

    repo = sizes_project(tmp_path / "repo", src=True)
    (site_packages(repo / ".venv") / "__editable__.sizes-0.1.pth").write_text(str(repo / "src") + "\n")
    python = str(repo / ".venv" / "bin" / "python")
    choose(repo)  # found in the repo: as `ph fix` chooses it
    scratch = tmp_path / "scratch"
    shutil.copytree(repo, scratch, ignore=shutil.ignore_patterns(".venv", ".git"))
    report = scratch / "src" / "sizes" / "report.py"
    report.write_text(report.read_text().replace("if size < 0:", "if size >= 0:"))
    assert run_pytest(scratch, python=python).green
    assert run_pytest(repo, python=python).failing == ["tests/test_report.py::test_total_skips_unknown"]


def plugin_dist(site: Path) -> None:
    """A pytest plugin installed as a distribution: its `pytest11` entry point gives the fixture `known_sizes`."""
    (site / "pytest_sizes.py").write_text("import pytest\n\n\n@pytest.fixture\ndef known_sizes():\n"
                                          "    return [100, 250, 0]\n")
    meta = site / "pytest_sizes-1.0.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: pytest-sizes\nVersion: 1.0\n")
    (meta / "entry_points.txt").write_text("[pytest11]\nsizes = pytest_sizes\n")


def test_a_project_using_pytest_plugins_from_its_venv_passes_ph_fix(tmp_path):
    repo = sizes_project(tmp_path / "repo", venv=None)
    (repo / "tests" / "test_props.py").write_text(
        "from hypothesis import given, strategies as st\nfrom sizes.report import total\n\n\n"
        "@given(st.lists(st.integers(min_value=0, max_value=10**6)))\n"
        "def test_total_of_known_sizes_is_their_sum(sizes):\n    assert total(sizes) == sum(sizes)\n\n\n"
        "def test_total_of_the_plugins_sizes(known_sizes):\n    assert total(known_sizes + [-5]) == 350\n")
    python = make_venv(repo / ".venv", WITH_PYTEST + HYPOTHESIS, {"sizefmt": DEPENDENCY})
    plugin_dist(site_packages(repo / ".venv"))
    git_commit(repo)
    done = ph_fix(repo, tmp_path, [FIX % "sizes/report.py", DONE])
    assert done.exit_code == 0, done.output
    assert "3 failing (1 passed) → 0 failing (4 passed)" in " ".join(done.stderr.split())
    without = subprocess.run([str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "tests/test_props.py::test_total_of_the_plugins_sizes"], cwd=repo,
                             capture_output=True, text=True, env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    assert "fixture 'known_sizes' not found" in without.stdout  # the plugin, not the test file, gives it


def test_tox_ini_pytest_configuration_applies(tmp_path):
    repo = sizes_project(tmp_path / "repo", venv=None)
    (repo / "tests" / "test_report.py").rename(repo / "tests" / "check_report.py")
    (repo / "tox.ini").write_text("[tox]\nenvlist = py3\n\n[pytest]\npython_files = check_*.py\n")
    make_venv(repo / ".venv", WITH_PYTEST, {"sizefmt": DEPENDENCY})
    git_commit(repo)
    done = ph_fix(repo, tmp_path, [FIX % "sizes/report.py", DONE])
    assert done.exit_code == 0, done.output
    assert "1 failing (1 passed) → 0 failing (2 passed)" in " ".join(done.stderr.split())


# -- ph's helpers inside other Pythons -------------------------------------------------------------------------------

@pytest.mark.parametrize("version", ["3.8", "3.9", "3.10", "3.12", "3.13"])
def test_the_verdict_plugin_tracer_and_spectrum_run_on_other_pythons(tmp_path, version):
    from pyharness.localise.linetrace import trace_test
    from pyharness.localise.spectrum import spectrum
    from pyharness.workspace.testrun import run_pytest

    found = other_python(version)
    if found is None:
        pytest.skip(f"no Python {version} on this machine")
    python = str(pip_venv(tmp_path / "venv", found, ["pytest"]))
    repo = sizes_project(tmp_path / "repo", venv=None)
    (repo / "sizes" / "report.py").write_text(REPORT.replace("import sizefmt", "from sizes import fmt as sizefmt"))
    (repo / "sizes" / "fmt.py").write_text(DEPENDENCY)
    run = run_pytest(repo, ["tests/test_report.py"], python=python)
    assert (run.reported, run.failing) == (True, ["tests/test_report.py::test_total_skips_unknown"])
    assert run.counts == {"failed": 1, "passed": 1}
    lines = REPORT.splitlines()
    guard, add = lines.index("        if size < 0:") + 1, lines.index("            result += size") + 1
    ran = trace_test(repo, "tests/test_report.py::test_total_skips_unknown", python=python)
    assert {guard, add} <= ran.lines["sizes/report.py"]
    assert ran.notes["sizes/report.py"][guard] == "size=100 -> False"
    scores = spectrum(repo, ["tests/test_report.py"], run.failing, python=python)
    assert scores["sizes/report.py"][add] == 1.0  # run by the failing test, not by the passing one
