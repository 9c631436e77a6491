"""Undo's journal and the names it prints (cases 72 and 73): `ph undo` and every other printer show file names inert
(C1 and bidirectional controls included); an undo journal outlives its repo's absence; journals expire by age only."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from safetree import _snapshot

from pyharness.cli.console import inert

DONE = 'Action: done {"summary": "done"}'
C1_NAME = "bill\u009b2J\u009d0;owned\u009c.py"
"""CSI (clear the screen), OSC (set the window title) and ST in their one-character C1 forms."""
BIDI_NAME = "x\u202a\u202b\u202c\u202d\u2066\u2067\u2068\u2069\u200e\u200f\u061c\u202egnp.py"
"""Every bidirectional control, ending in RIGHT-TO-LEFT OVERRIDE (the Trojan-source trick: shown as `yp.png`)."""
OVER_THE_LIMIT = 31 * 24 * 3600
"""A day past the 30 days journals and repo state are kept."""
RAW = re.compile("[\u0080-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""What must never reach the terminal unescaped."""


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """ph's per-repo state (journal, lock) in this test's tmp dir, not the user's."""
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))
    return tmp_path / "state"


def ph(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", *args], capture_output=True, encoding="utf-8",
                          timeout=120)


def write(path: str, body: str) -> str:
    return f'Action: write {{"path": {json.dumps(path)}}}\n```python\n{body}```'


def ph_run(repo: Path, replies: list[str], *extra: str) -> subprocess.CompletedProcess:
    script = repo.parent / f"replies-{time.monotonic_ns()}.json"
    script.write_text(json.dumps(replies), encoding="utf-8")
    return ph("run", "change the code", "--repo", str(repo), "--model", f"scripted:{script}", *extra)


def files(repo: Path) -> dict[str, bytes]:
    """The repo as the user sees it, minus ph's .ph/ and git's .git/."""
    return {k: v for k, v in _snapshot(repo).items() if k.split("/")[0] not in (".ph", ".git")}


def shown(name: str) -> str:
    """The name as ph must print it: each control as a visible escape."""
    return "".join(f"\\x{ord(c):02x}" if 0x80 <= ord(c) <= 0x9f else f"\\u{ord(c):04x}" if RAW.match(c) else c
                   for c in name)


@pytest.mark.case(72)
@pytest.mark.parametrize("name", [C1_NAME, BIDI_NAME], ids=["c1", "bidi"])
def test_ph_undo_prints_a_file_name_with_c1_and_bidi_controls_inert(tree, name):
    tree.write("a.py", "A = 1\n")
    tree.git_init()
    before = files(tree.repo)
    ran = ph_run(tree.repo, [write(name, "X = 1\n"), DONE])
    assert ran.returncode == 0, ran.stderr
    assert (tree.repo / name).read_text() == "X = 1\n"
    assert not RAW.search(ran.stdout + ran.stderr)  # the run's diff and summary name it inert too
    assert shown(name) in ran.stderr
    undone = ph("undo", "--repo", str(tree.repo))
    assert undone.returncode == 0, undone.stderr
    assert not RAW.search(undone.stdout + undone.stderr)
    assert undone.stdout.splitlines() == [f"removed {shown(name)}"]
    assert files(tree.repo) == before


@pytest.mark.case(72)
def test_ph_run_json_escapes_the_controls_and_keeps_the_name_exact(tree):
    tree.write("a.py", "A = 1\n")
    ran = ph_run(tree.repo, [write(BIDI_NAME, "X = 1\n"), write(C1_NAME, "Y = 1\n"), DONE], "--json")
    assert ran.returncode == 0, ran.stderr
    assert not RAW.search(ran.stdout + ran.stderr)
    assert sorted(json.loads(ran.stdout)["files_changed"]) == sorted([BIDI_NAME, C1_NAME])  # JSON \u escapes


@pytest.mark.case(72)
def test_inert_shows_every_c0_c1_bidi_control_and_lone_surrogate_visibly():
    controls = [*range(0x00, 0x09), *range(0x0b, 0x20), 0x7f, *range(0x80, 0xa0), 0x061c, 0x200e, 0x200f,
                *range(0x202a, 0x202f), *range(0x2066, 0x206a), 0xdc9b]
    for code in controls:
        assert inert(f"a{chr(code)}b") == (f"a\\x{code:02x}b" if code < 0x100 else f"a\\u{code:04x}b"), hex(code)
    assert inert("line\n\tindented") == "line\n\tindented"  # text keeps its lines and tabs
    assert inert("a.py\n\tremoved b.py", newlines=False) == "a.py\\x0a\\x09removed b.py"  # a name does not
    assert inert("café ünïcødé ← ok") == "café ünïcødé ← ok"


@pytest.mark.case(73)
def test_a_journal_survives_its_repo_being_moved_away_while_another_repo_runs(tree):
    tree.write("a.py", "A = 1\n")
    before = files(tree.repo)
    ran = ph_run(tree.repo, [write("a.py", "A = 2\n"), write("new.py", "N = 1\n"), DONE])
    assert ran.returncode == 0, ran.stderr
    moved = tree.base / "unmounted"
    tree.repo.rename(moved)  # the repo is not at its path: moved, or its drive unmounted
    other = tree.base / "other"
    other.mkdir()
    (other / "b.py").write_text("B = 1\n")
    elsewhere = ph_run(other, [write("b.py", "B = 2\n"), DONE])  # makes a new repo's state, which prunes
    assert elsewhere.returncode == 0, elsewhere.stderr
    moved.rename(tree.repo)
    undone = ph("undo", "--repo", str(tree.repo))
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.splitlines() == ["restored a.py", "removed new.py"]
    assert files(tree.repo) == before


def age(folder: Path, seconds: float) -> None:
    """Set the mtime of folder and everything under it `seconds` into the past."""
    when = time.time() - seconds
    for path in [folder, *folder.rglob("*")]:
        os.utime(path, (when, when), follow_symlinks=False)


@pytest.mark.case(73)
def test_a_journal_older_than_the_age_limit_expires(tree, state_dir):
    tree.write("a.py", "A = 1\n")
    assert ph_run(tree.repo, [write("a.py", "A = 2\n"), DONE]).returncode == 0
    journals = list(state_dir.rglob("undo/*.json"))
    assert len(journals) == 1
    age(journals[0], OVER_THE_LIMIT)
    undone = ph("undo", "--repo", str(tree.repo))
    assert undone.returncode == 1
    assert "nothing to undo" in undone.stderr and "expired" in undone.stderr and "30 days" in undone.stderr
    assert (tree.repo / "a.py").read_text() == "A = 2\n"  # the run's change stays: its journal is gone
    assert not journals[0].exists()


@pytest.mark.case(73)
def test_state_unused_past_the_age_limit_is_pruned_whether_or_not_its_repo_is_there(tree, state_dir):
    old_here, old_gone, new_gone = (tree.base / n for n in ("old-here", "old-gone", "new-gone"))
    for repo in (old_here, old_gone, new_gone):
        repo.mkdir()
        (repo / "a.py").write_text("A = 1\n")
        assert ph_run(repo, [write("a.py", "A = 2\n"), DONE]).returncode == 0
    shutil.rmtree(old_gone)
    shutil.rmtree(new_gone)
    states = {Path((d / "repo").read_text()): d for d in (state_dir / "repos").iterdir()}
    for repo in (old_here, old_gone):
        age(states[repo.resolve()], OVER_THE_LIMIT)
    tree.write("a.py", "A = 1\n")
    assert ph_run(tree.repo, [write("a.py", "A = 2\n"), DONE]).returncode == 0  # a new repo's state: prunes
    assert not states[old_here.resolve()].exists() and not states[old_gone.resolve()].exists()
    assert states[new_gone.resolve()].is_dir()  # absent, but used recently: kept
    undone = ph("undo", "--repo", str(old_here))
    assert undone.returncode == 1 and "nothing to undo" in undone.stderr
    assert (old_here / "a.py").read_text() == "A = 2\n"
