"""Undo, journal and lock: cases 30, 32-35 and 37 of docs/safety-cases.md, plus the audit's forged-journal finding."""

import base64
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetree import _snapshot

from pyharness.errors import UserError
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace.gitops import run as git
from pyharness.workspace.lock import RepoLock
from pyharness.workspace.undo import journal_dir, pending, undo_last

DONE = 'Action: done {"summary": "done"}'


def write(path: str, body: str) -> str:
    return f'Action: write {{"path": "{path}"}}\n```python\n{body}```'


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """ph's per-repo state (journal, lock) in this test's tmp dir, not the user's."""
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def files(repo: Path) -> dict[str, bytes]:
    """The repo as the user sees it: every file, link and dir with mode and bytes, minus ph's .ph/ and git's .git/."""
    return {k: v for k, v in _snapshot(repo).items() if k.split("/")[0] not in (".ph", ".git")}


def ph(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", *args], capture_output=True, text=True, timeout=120)


def run(repo: Path, replies: list[str], mode: str = "run", model=None):
    return run_job(repo, mode, "change the code", model or ScriptedModel(replies=replies))


class SignalAt(ScriptedModel):
    """A scripted model whose process gets `sig` when asked for reply number `at` (0-based): a real Ctrl-C or kill."""

    def __init__(self, replies: list[str], at: int, sig: int):
        super().__init__(replies=replies)
        self.at, self.sig = at, sig

    def chat(self, messages, options):
        if self.calls == self.at:
            os.kill(os.getpid(), self.sig)
            time.sleep(5)  # the signal lands here
        return super().chat(messages, options)


def seed(tree) -> dict[str, bytes]:
    tree.write("a.py", "A = 1\n")
    tree.write("b.py", "B = 1\n")
    return files(tree.repo)


@pytest.mark.case(30)
def test_ctrl_c_between_two_writes_leaves_every_completed_write_undoable(tree):
    before = seed(tree)
    model = SignalAt([write("a.py", "A = 2\n"), write("pkg/new.py", "N = 1\n"), DONE], at=2, sig=signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        run(tree.repo, [], model=model)
    assert (tree.repo / "a.py").read_text() == "A = 2\n" and (tree.repo / "pkg/new.py").exists()
    journal = json.loads(pending(tree.repo)[0].read_text())
    assert sorted(journal["files"]) == ["a.py", "pkg/new.py"] and journal["dirs"] == ["pkg"]
    done = undo_last(tree.repo)
    assert done == ["restored a.py", "removed pkg/new.py", "removed directory pkg/"]
    assert files(tree.repo) == before


KILLED_RUN = """
import os, signal, sys, time
sys.path.insert(0, {tests!r})
from test_safety_undo import SignalAt, write, DONE
from pyharness.loop.session import run_job
model = SignalAt([write("a.py", "A = 2\\n"), write("b.py", "B = 2\\n"), write("c.py", "C = 1\\n"), DONE],
                 at={at}, sig=signal.SIGKILL)
{patch}
run_job({repo!r}, "run", "change the code", model)
"""

# os.replace is how the workspace puts a finished file in place: dying there is dying between journal and write
KILL_ON_REPLACE = """
real_replace = os.replace
def dying_replace(src, dst, *a, **k):
    if os.path.basename(str(dst)) == "b.py":
        os.kill(os.getpid(), signal.SIGKILL)
    return real_replace(src, dst, *a, **k)
os.replace = dying_replace
"""


def killed_run(tree, at: int, patch: str = "") -> subprocess.CompletedProcess:
    script = KILLED_RUN.format(tests=str(Path(__file__).parent), at=at, repo=str(tree.repo), patch=patch)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)


@pytest.mark.case(30, 32)
def test_kill_9_between_writes_then_ph_undo_restores_the_state_before_the_run(tree):
    before = seed(tree)
    proc = killed_run(tree, at=2)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (tree.repo / "a.py").read_text() == "A = 2\n" and (tree.repo / "b.py").read_text() == "B = 2\n"
    lock = RepoLock(tree.repo).path
    assert json.loads(lock.read_text())["pid"]  # the killed run's lock file is left behind, naming a dead pid
    undone = ph("undo", "--repo", str(tree.repo))  # a fresh process: recovery from the journal alone
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.splitlines() == ["restored a.py", "restored b.py"]
    assert files(tree.repo) == before


@pytest.mark.case(30)
def test_kill_9_after_the_journal_entry_but_before_the_write_is_recovered(tree):
    before = seed(tree)
    proc = killed_run(tree, at=99, patch=KILL_ON_REPLACE)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (tree.repo / "a.py").read_text() == "A = 2\n" and (tree.repo / "b.py").read_text() == "B = 1\n"
    assert sorted(json.loads(pending(tree.repo)[0].read_text())["files"]) == ["a.py", "b.py"]  # journal came first
    undone = ph("undo", "--repo", str(tree.repo))
    assert undone.returncode == 0, undone.stderr
    # the killed write's temp file is case 27's business (cleaned at the next start); every real file is as before
    assert {k: v for k, v in files(tree.repo).items() if not k.endswith(".tmp")} == before


WAITING_TEST = """
import os, time
def test_waits_while_held():
    deadline = time.monotonic() + 60
    while os.path.exists({hold!r}) and time.monotonic() < deadline:
        time.sleep(0.05)
"""


@pytest.mark.case(32)
def test_a_second_run_on_the_same_repo_is_refused_while_the_first_runs(tree, tmp_path):
    hold = tmp_path / "hold"
    hold.touch()
    tree.write("tests/test_wait.py", WAITING_TEST.format(hold=str(hold)))
    tree.write("a.py", "A = 1\n")
    first_replies = tmp_path / "first.json"
    first_replies.write_text(json.dumps(['Action: run_tests {}', DONE]))
    first = subprocess.Popen([sys.executable, "-m", "pyharness.cli", "run", "check", "--repo", str(tree.repo),
                              "--model", f"scripted:{first_replies}"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        lock = RepoLock(tree.repo).path
        deadline = time.monotonic() + 60
        while not (lock.exists() and f'"pid": {first.pid}' in lock.read_text()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert f'"pid": {first.pid}' in lock.read_text()
        before = files(tree.repo)
        second_replies = tmp_path / "second.json"
        second_replies.write_text(json.dumps([write("a.py", "A = 2\n"), DONE]))
        second = ph("run", "change a", "--repo", str(tree.repo), "--model", f"scripted:{second_replies}")
        assert second.returncode == 1
        assert f"another ph run (pid {first.pid}" in second.stderr and "one run per repo" in second.stderr
        assert "Traceback" not in second.stderr
        assert files(tree.repo) == before
        blocked = ph("undo", "--repo", str(tree.repo))  # undo waits its turn too
        assert blocked.returncode == 1 and "another ph run" in blocked.stderr
    finally:
        hold.unlink()
        out, err = first.communicate(timeout=120)
    assert first.returncode == 0, err
    assert lock.read_text() == ""  # released when the run ended
    again = ph("run", "change a", "--repo", str(tree.repo), "--model", f"scripted:{second_replies}")
    assert again.returncode == 0, again.stderr
    assert (tree.repo / "a.py").read_text() == "A = 2\n"


@pytest.mark.case(32)
def test_a_stale_lock_of_a_dead_pid_is_taken_over(tree):
    tree.write("a.py", "A = 1\n")
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = RepoLock(tree.repo)
    lock.path.write_text(json.dumps({"pid": dead.pid, "started": "2020-01-01T00:00:00+00:00"}))
    with lock:
        assert lock.took_over == dead.pid
        assert json.loads(lock.path.read_text())["pid"] == os.getpid()
        with pytest.raises(UserError, match=f"pid {os.getpid()}"):
            RepoLock(tree.repo).acquire()
    lock.path.write_text(json.dumps({"pid": dead.pid}))
    result = run(tree.repo, [write("a.py", "A = 2\n"), DONE])
    assert result.outcome == "done" and (tree.repo / "a.py").read_text() == "A = 2\n"


@pytest.mark.case(33)
def test_undo_gives_back_the_users_uncommitted_version_not_head(tree):
    tree.write("a.py", "def f():\n    return 1\n")
    tree.git_init()
    head = git(tree.repo, "rev-parse", "HEAD").strip()
    tree.write("a.py", "def f():\n    return 1  # my uncommitted work\n")
    users = (tree.repo / "a.py").read_bytes()
    edit = ('Action: edit {"path": "a.py"}\n<<<<<<< SEARCH\n    return 1  # my uncommitted work\n=======\n'
            "    return 2\n>>>>>>> REPLACE")
    assert run(tree.repo, [edit, DONE]).outcome == "done"
    assert b"return 2" in (tree.repo / "a.py").read_bytes()
    assert undo_last(tree.repo) == ["restored a.py"]
    assert (tree.repo / "a.py").read_bytes() == users
    # git untouched: same HEAD, no stash, the user's change still shows as uncommitted
    assert git(tree.repo, "rev-parse", "HEAD").strip() == head
    assert git(tree.repo, "stash", "list").strip() == ""
    assert git(tree.repo, "status", "--porcelain", "--", "a.py").strip() == "M a.py"


@pytest.mark.case(34)
def test_undo_reverts_only_the_last_run(tree):
    before = seed(tree)
    run(tree.repo, [write("a.py", "A = 2\n"), DONE])
    after_first = files(tree.repo)
    run(tree.repo, [write("b.py", "B = 2\n"), DONE])
    assert undo_last(tree.repo) == ["restored b.py"]
    assert files(tree.repo) == after_first
    assert undo_last(tree.repo) == ["restored a.py"]  # and the one before it, in turn
    assert files(tree.repo) == before
    with pytest.raises(UserError, match="nothing to undo"):
        undo_last(tree.repo)


@pytest.mark.case(34)
def test_undo_refuses_naming_files_changed_after_the_run_and_force_overrides(tree):
    before = seed(tree)
    tree.git_init()
    head = git(tree.repo, "rev-parse", "HEAD").strip()
    run(tree.repo, [write("a.py", "A = 2\n"), write("b.py", "B = 2\n"), write("c.py", "C = 1\n"), DONE])
    tree.write("b.py", "B = 3  # the user's edit after the run\n")
    (tree.repo / "c.py").unlink()
    tree.write("c.py", "C = 9\n")
    touched = files(tree.repo)
    refused = ph("undo", "--repo", str(tree.repo))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "changed since ph's run: b.py, c.py" in refused.stderr and "--force" in refused.stderr
    assert "a.py" not in refused.stderr.split("run:")[1].split(";")[0]
    assert files(tree.repo) == touched  # nothing restored, not even a.py
    forced = ph("undo", "--repo", str(tree.repo), "--force")
    assert forced.returncode == 0, forced.stderr
    assert forced.stdout.splitlines() == ["restored a.py", "restored b.py", "removed c.py"]
    assert {k: v for k, v in files(tree.repo).items()} == before
    # ph never commits: the "last commit is not ph's / already pushed" checks have nothing to look at
    assert git(tree.repo, "rev-parse", "HEAD").strip() == head


@pytest.mark.case(34)
def test_a_journal_shipped_inside_the_repo_is_never_read(tree):
    tree.write("a.py", "A = 1\n")
    shipped = {"files": {"../outside/secret.txt": None, "../outside/planted.txt": base64.b64encode(b"x").decode()}}
    tree.write(".ph/undo/20990101-000000-000000-fix.json", json.dumps(shipped))
    before = tree.repo_hash()
    refused = ph("undo", "--repo", str(tree.repo))
    assert refused.returncode == 1 and "nothing to undo" in refused.stderr
    assert tree.repo_hash() == before  # and the fixture checks outside/ byte for byte


@pytest.mark.case(34)
@pytest.mark.parametrize("key", ["../outside/secret.txt", "/etc/hostname", "link/secret.txt", "inner/x.py",
                                 ".git/config"])
def test_a_forged_journal_entry_is_refused_before_anything_changes(tree, key):
    tree.write("a.py", "A = 1\n")
    (tree.repo / "link").symlink_to("../outside")
    tree.write("real/x.py", "X = 1\n")
    (tree.repo / "inner").symlink_to("real")
    run(tree.repo, [write("a.py", "A = 2\n"), DONE])
    log = pending(tree.repo)[0]
    record = json.loads(log.read_text())
    record["files"][key] = {"old": base64.b64encode(b"planted\n").decode(), "mode": 0o644, "wrote": []}
    log.write_text(json.dumps(record))
    before = tree.repo_hash()
    with pytest.raises(UserError, match=f"journal entry {key}") as err:
        undo_last(tree.repo, force=True)
    assert "nothing was changed" in str(err.value)
    assert tree.repo_hash() == before and (tree.repo / "a.py").read_text() == "A = 2\n"
    tree.seen(str(err.value))


@pytest.mark.case(34, 35)
def test_undo_does_not_write_through_a_directory_swapped_for_a_symlink_after_the_run(tree):
    tree.write("pkg/mod.py", "M = 1\n")
    run(tree.repo, [write("pkg/mod.py", "M = 2\n"), DONE])
    (tree.repo / "pkg").rename(tree.repo / "pkg-moved")
    (tree.repo / "pkg").symlink_to("../outside")
    before = tree.repo_hash()
    with pytest.raises(UserError, match="journal entry pkg/mod.py") as err:
        undo_last(tree.repo, force=True)
    assert tree.repo_hash() == before
    assert not (tree.outside / "mod.py").exists()
    tree.seen(str(err.value))


@pytest.mark.case(35)
def test_undo_deletes_created_files_and_dirs_and_restores_bytes_and_mode(tree):
    script = tree.write("tool.py", "#!/usr/bin/env python\r\nX = 1\r\nprint(X)")  # CRLF, no final newline
    script.chmod(0o751)
    (tree.repo / "empty").mkdir()
    tree.write("keep/old.py", "K = 1\n")
    before = files(tree.repo)
    replies = [
        'Action: edit {"path": "tool.py"}\n<<<<<<< SEARCH\nX = 1\n=======\nX = 2\n>>>>>>> REPLACE',
        write("new/deep/mod.py", "D = 1\n"),
        write("keep/added.py", "A = 1\n"),
        write("user/dir/x.py", "U = 1\n"),
        DONE,
    ]
    assert run(tree.repo, replies).outcome == "done"
    assert (tree.repo / "tool.py").read_bytes() != before["tool.py"]
    tree.write("user/mine.txt", "the user put a file in a directory ph created\n")
    done = undo_last(tree.repo)
    assert done == ["removed keep/added.py", "removed new/deep/mod.py", "restored tool.py", "removed user/dir/x.py",
                    "removed directory new/deep/", "removed directory user/dir/", "removed directory new/"]
    assert (tree.repo / "tool.py").read_bytes() == b"#!/usr/bin/env python\r\nX = 1\r\nprint(X)"
    assert (tree.repo / "tool.py").stat().st_mode & 0o7777 == 0o751
    after = files(tree.repo)
    assert after.pop("user/mine.txt") and after.pop("user") == b"<dir>"  # not empty: kept
    assert after == before  # 'empty/' and 'keep/' were not ph's: kept


@pytest.mark.case(37)
def test_undo_works_in_a_directory_that_is_not_a_git_repo(tree):
    before = seed(tree)
    assert git_dir_absent(tree.repo)
    assert run(tree.repo, [write("a.py", "A = 2\n"), write("src/n.py", "N = 1\n"), DONE]).outcome == "done"
    undone = ph("undo", "--repo", str(tree.repo))
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.splitlines() == ["restored a.py", "removed src/n.py", "removed directory src/"]
    assert files(tree.repo) == before and git_dir_absent(tree.repo)


def git_dir_absent(repo: Path) -> bool:
    return not (repo / ".git").exists() and git_top(repo) is None


def git_top(repo: Path) -> str | None:
    from pyharness.workspace.gitops import GitError

    try:
        return git(repo, "rev-parse", "--show-toplevel").strip()
    except GitError:
        return None


def test_the_journal_lives_outside_the_repo(tree, state_dir):
    tree.write("a.py", "A = 1\n")
    run(tree.repo, [write("a.py", "A = 2\n"), DONE])
    log = pending(tree.repo)[0]
    assert state_dir in log.parents and tree.repo not in log.parents
    assert journal_dir(tree.repo).stat().st_mode & 0o777 == 0o700 and log.stat().st_mode & 0o777 == 0o600
    assert not (tree.repo / ".ph" / "undo").exists()


def test_state_unused_for_the_age_limit_is_pruned_and_a_state_dir_inside_the_repo_is_refused(tree, monkeypatch):
    from pyharness.workspace.lock import STATE_MAX_AGE, repo_state_dir

    recent, old = tree.base / "recent", tree.base / "old"
    recent.mkdir()
    old.mkdir()
    recent_state, old_state = repo_state_dir(recent), repo_state_dir(old)
    recent.rmdir()  # case 73: a repo absent now (moved, unmounted) keeps its state
    past = time.time() - STATE_MAX_AGE - 60
    for path in (old_state, *old_state.iterdir()):
        os.utime(path, (past, past))
    repo_state_dir(tree.repo)
    assert recent_state.is_dir() and not old_state.exists()
    monkeypatch.setenv("PH_STATE_DIR", str(tree.repo / "state"))
    with pytest.raises(UserError, match="inside the repo"):
        repo_state_dir(tree.repo)
