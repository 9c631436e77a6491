"""Git: ph's own commits run no hooks and never sign (case 36); a repo's own .git/config runs no code (fsmonitor);
its `core.worktree` does not move ph's root (case 70); code that runs in the sandbox cannot write `.git` (nor make a
`.git` where there was none), so nothing it plants runs at the user's next plain `git status` (case 77); and ph's own
git calls run none of the commands a repo's config (or a file it includes) names, filter drivers included (case 78)."""

import shutil
import subprocess
from pathlib import Path

import pytest
from calckit import attack_test, calc_repo, marker_script, plain_git, read_record

from pyharness.evals.demo import load_jobs, make_repo
from pyharness.evals.runner import make_stdout_repo
from pyharness.evals.seeded import edited_files
from pyharness.evals.tasks import Case, StdoutTask
from pyharness.harness.pipeline import LAYERS, HarnessConfig
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace import gitops, sandbox
from pyharness.workspace.gitops import listed_files, toplevel
from pyharness.workspace.gitops import run as git
from pyharness.workspace.testrun import run_pytest

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


@pytest.mark.case(70)
def test_core_worktree_in_the_repos_config_does_not_move_the_root(tree):
    tree.write("a.py", "x = 1\n")
    tree.outside_file("elsewhere.py", "y = 2\n")
    tree.git_init()
    subprocess.run(["git", "config", "core.worktree", str(tree.outside)], cwd=tree.repo, check=True, timeout=30)
    (tree.repo / "sub").mkdir()
    assert toplevel(tree.repo / "sub") == tree.repo
    assert toplevel(tree.repo) == tree.repo
    listed = listed_files(tree.repo)
    assert listed is not None and "a.py" in listed
    assert "elsewhere.py" not in listed


PLANT = """
git = os.path.join(os.getcwd(), '.git')
config = '[core]\\n\\tfsmonitor = "EVIL"\\n[filter "x"]\\n\\tclean = EVIL\\n\\trequired = true\\n'
plants = [('config', 'config', config),
          ('hook', 'hooks/post-checkout', '#!/bin/sh\\nEVIL\\n'), ('attributes', 'info/attributes', '* filter=x\\n')]
for name, rel, text in plants:
    try:
        os.makedirs(os.path.dirname(os.path.join(git, rel)), exist_ok=True)
        with open(os.path.join(git, rel), 'a') as f:
            f.write(text.replace('EVIL', EVIL))
        os.chmod(os.path.join(git, rel), 0o755)
        results[name] = 'written'
    except OSError as e:
        results[name] = type(e).__name__
try:
    os.rename(git, git + '.old')
    os.mkdir(git)
    results['swap'] = 'swapped'
except OSError as e:
    results['swap'] = type(e).__name__
"""


def plant(tree, repo: Path, evil: Path, record: Path) -> dict:
    (repo / "tests" / "test_attack.py").write_text(attack_test(f"EVIL = {str(evil)!r}\n{PLANT}", record))
    run = run_pytest(repo, ["tests/test_attack.py"], timeout=60)
    tree.seen(run.observation())
    return read_record(record)


@pytest.mark.case(77)
def test_code_under_test_cannot_write_dot_git_and_the_users_next_git_status_runs_nothing(tree, flow):
    calc_repo(tree)
    markers = tree.base / "markers"
    markers.mkdir()
    evil = marker_script(tree.base / "evil.sh", markers / "ran")
    git_before = {p: p.read_bytes() for p in (tree.repo / ".git").rglob("*") if p.is_file()}
    found = plant(tree, tree.repo, evil, tree.repo / "record.json")
    assert found, "the attack test did not run"
    assert "written" not in found.values() and found["swap"] != "swapped", found
    assert {p: p.read_bytes() for p in (tree.repo / ".git").rglob("*") if p.is_file()} == git_before
    assert not (tree.repo / ".git.old").exists()
    (tree.repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")  # the user's own next change
    status = plain_git(tree.repo, "status", "--porcelain")
    assert status.returncode == 0 and "calc.py" in status.stdout, status.stderr
    plain_git(tree.repo, "checkout", "--", "calc.py")
    assert ran(markers) == []


@pytest.mark.case(77)
def test_without_the_sandbox_the_same_test_plants_a_command_that_plain_git_runs(tree):
    """The hole case 77 closes is real: the test above, run with the sandbox off, makes git run its command."""
    control = tree.base / "control"
    calc_repo(tree)
    shutil.copytree(tree.repo, control, symlinks=True)
    markers = tree.base / "markers"
    markers.mkdir()
    evil = marker_script(tree.base / "evil.sh", markers / "ran")
    with sandbox.override(False):
        found = plant(tree, control, evil, control / "record.json")
    assert found["config"] == "written"
    shutil.rmtree(control / ".git")
    (control / ".git.old").rename(control / ".git")
    plain_git(control, "status", "--porcelain")
    assert ran(markers) == ["ran"]


@pytest.mark.case(77)
def test_a_dot_git_made_where_there_was_none_is_gone_after_the_run(tree, flow):
    calc_repo(tree, git=False)
    markers = tree.base / "markers"
    markers.mkdir()
    evil = marker_script(tree.base / "evil.sh", markers / "ran")
    body = (f"subprocess.run(['git', 'init', '-q'], check=True)\n"
            f"with open('.git/config', 'a') as f:\n"
            f"    f.write('[core]\\n\\tfsmonitor = \"{evil}\"\\n')\n"
            "results['made'] = os.path.exists('.git/config')\n")
    (tree.repo / "tests" / "test_attack.py").write_text(attack_test(body, tree.repo / "record.json"))
    run = run_pytest(tree.repo, ["tests/test_attack.py"], timeout=60)
    tree.seen(run.observation())
    assert read_record(tree.repo / "record.json") == {"made": True}  # made inside the run...
    assert not (tree.repo / ".git").exists()  # ...and removed when it ended
    status = plain_git(tree.repo, "status")
    assert status.returncode != 0 and "not a git repository" in status.stderr.lower()
    assert ran(markers) == []


def hostile_config(tree) -> Path:
    """A repo whose config (and a file it includes) names a command for every hook git has: filter drivers
    (clean, smudge, process, required), diff drivers (textconv, command), fsmonitor, pager, editor, ssh, askpass."""
    markers = tree.base / "markers"
    markers.mkdir()
    calc_repo(tree)
    tree.write("notes.txt", "one\n")
    tree.write(".gitattributes", "* filter=evil diff=evil\n*.txt filter=inc\n")
    plain_git(tree.repo, "add", "-A")
    plain_git(tree.repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "attrs")

    def cmd(name: str) -> str:
        return str(marker_script(tree.base / f"{name}.sh", markers / name))

    included = tree.base / "included.gitconfig"
    included.write_text(f'[filter "inc"]\n\tclean = {cmd("inc-clean")}\n\tsmudge = {cmd("inc-smudge")}\n'
                        f"\trequired = true\n[core]\n\tfsmonitor = {cmd('inc-fsmonitor')}\n")
    with (tree.repo / ".git" / "config").open("a") as f:
        f.write(f'[filter "evil"]\n\tclean = {cmd("clean")}\n\tsmudge = {cmd("smudge")}\n'
                f"\tprocess = {cmd('process')}\n\trequired = true\n"
                f'[diff "evil"]\n\ttextconv = {cmd("textconv")}\n\tcommand = {cmd("diff-command")}\n'
                f"[core]\n\tfsmonitor = {cmd('fsmonitor')}\n\tpager = {cmd('pager')}\n\teditor = {cmd('editor')}\n"
                f"\tsshCommand = {cmd('ssh')}\n\taskPass = {cmd('askpass')}\n"
                f"[include]\n\tpath = {included}\n")
    hooks = tree.repo / ".git" / "hooks"
    for hook in ("pre-commit", "post-commit", "post-index-change", "reference-transaction"):
        marker_script(hooks / hook, markers / hook)
    tree.write("calc.py", "def add(a, b):\n    return a + b  # changed\n")
    tree.write("notes.txt", "two\n")
    return markers


@pytest.mark.case(78)
def test_phs_own_git_calls_run_no_command_the_repos_config_names(tree):
    markers = hostile_config(tree)
    assert gitops.listed_files(tree.repo) is not None
    assert gitops.toplevel(tree.repo) == tree.repo and gitops.head(tree.repo)
    gitops.ignored(tree.repo, ["calc.py", "build/x"])
    assert edited_files(tree.repo) == ["calc.py", "notes.txt"]
    for args in (("add", "-A"), ("diff", "--cached", "--stat"), ("log", "-p", "-1"),
                 ("commit", "-q", "--no-verify", "-m", "ph")):
        try:
            gitops.run(tree.repo, *args)
        except gitops.GitError:
            pass  # a driver set to nothing may make git stop with an error: what matters is that nothing ran
    assert ran(markers) == []
    assert gitops.run(tree.repo, "show", "HEAD:notes.txt") == "two\n"  # the content, not a filter's output


@pytest.mark.case(78)
def test_the_same_calls_as_plain_git_run_the_drivers(tree):
    """The hole case 78 closes is real: plain git runs the repo's filter driver and the included file's fsmonitor."""
    markers = hostile_config(tree)
    plain_git(tree.repo, "add", "-A")
    assert {"process", "inc-fsmonitor"} <= set(ran(markers))
