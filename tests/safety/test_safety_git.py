"""Git: ph's own commits run no hooks and never sign (case 36); a repo's own .git/config runs no code (fsmonitor)."""

import subprocess
from pathlib import Path

import pytest

from pyharness.evals.demo import load_jobs, make_repo
from pyharness.evals.runner import make_stdout_repo
from pyharness.evals.tasks import Case, StdoutTask
from pyharness.harness.pipeline import LAYERS, HarnessConfig
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace.gitops import run as git

HOOK_NAMES = ("pre-commit", "prepare-commit-msg", "commit-msg", "post-commit", "post-checkout", "post-index-change",
              "reference-transaction", "fsmonitor-watchman")


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


def script(path: Path, marker: Path) -> Path:
    """An executable that leaves `marker` behind and fails."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\nexit 1\n")
    path.chmod(0o755)
    return path


def hooks(folder: Path, markers: Path, tag: str) -> Path:
    for name in HOOK_NAMES:
        script(folder / name, markers / f"{tag}-{name}")
    return folder


def ran(markers: Path) -> list[str]:
    return sorted(p.name for p in markers.iterdir())


@pytest.fixture
def hostile_global(tree, monkeypatch) -> Path:
    """A user-wide git config that would run code on any git call ph makes: hooks, templates, GPG, fsmonitor, pager."""
    markers = tree.base / "markers"
    markers.mkdir()
    config = tree.base / "gitconfig"
    config.write_text(
        "[core]\n"
        f"\thooksPath = {hooks(tree.base / 'global-hooks', markers, 'hooksPath')}\n"
        f"\tfsmonitor = {script(tree.base / 'fsmonitor.sh', markers / 'fsmonitor')}\n"
        f"\tpager = touch '{markers / 'pager'}'; cat\n"
        "[init]\n"
        f"\ttemplateDir = {hooks(tree.base / 'template' / 'hooks', markers, 'template').parent}\n"
        "[commit]\n\tgpgSign = true\n"
        "[gpg]\n"
        f"\tprogram = {script(tree.base / 'gpg.sh', markers / 'gpg')}\n"
        "[user]\n\tname = Someone Else\n\temail = someone@example.com\n"
    )
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    return markers


@pytest.mark.case(36)
def test_ph_set_up_commits_run_no_hooks_never_sign_and_have_a_fixed_author(tree, hostile_global):
    demo = make_repo(tree.base / "demo", load_jobs()[0])
    task = StdoutTask(id="t", prompt="print 1", example=Case(stdin="", stdout="1\n"), hidden=[])
    evalrepo = make_stdout_repo(tree.base / "eval", task)
    for repo, message in ((demo, "demo: clean"), (evalrepo, "eval task")):
        log = git(repo, "log", "--format=%an <%ae>|%cn <%ce>|%s|%G?").strip().splitlines()
        assert log == [f"ph <ph@localhost>|ph <ph@localhost>|{message}|N"]  # one commit, ph's, unsigned
        assert git(repo, "status", "--porcelain").strip() == "" or repo == demo  # the demo seeds a change
        assert not (repo / ".git" / "hooks").exists()  # no template (with its hooks) copied in
    assert ran(hostile_global) == []


BUGGY = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
FIX = ('Action: edit {"path": "calc.py"}\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n'
       ">>>>>>> REPLACE")


def hostile_repo(tree) -> Path:
    """A user repo whose own .git/config and hooks would run code: fsmonitor and a pre-commit hook."""
    tree.write("calc.py", BUGGY)
    tree.write("tests/test_calc.py", TEST)
    tree.git_init()
    markers = tree.base / "markers"
    markers.mkdir()
    hooks(tree.repo / ".git" / "hooks", markers, "repo")
    with (tree.repo / ".git" / "config").open("a") as f:
        f.write(f"[core]\n\tfsmonitor = \"touch {markers / 'MARKER'}\"\n\tpager = touch '{markers / 'pager'}'; cat\n")
    return markers


@pytest.mark.case(36)
def test_a_ph_fix_run_in_a_repo_whose_config_runs_code_runs_none_of_it(tree):
    markers = hostile_repo(tree)
    direct = subprocess.run(["git", "ls-files"], cwd=tree.repo, capture_output=True, timeout=30)
    assert direct.returncode == 0 and ran(markers) == ["MARKER"]  # the hole is real: plain git runs it
    (markers / "MARKER").unlink()
    loop = HarnessConfig.parse_spec("on", ",".join(name for name in LAYERS if name != "trials"))
    result = run_job(tree.repo, "fix", "", ScriptedModel(replies=[FIX]), harness=loop)
    assert result.outcome == "done", result.reason
    assert (tree.repo / "calc.py").read_text() == BUGGY.replace("a - b", "a + b")
    assert ran(markers) == []
    assert ".ph/" in (tree.repo / ".git" / "info" / "exclude").read_text().splitlines()
