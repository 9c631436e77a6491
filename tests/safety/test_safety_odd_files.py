"""Odd files in the tree (cases 69, 90, 91): a FIFO, device or huge sparse file (there from the start, or made by a
candidate, even named `*.pth`) neither blocks nor exhausts ph — before its first step, after "done", or while it holds
the repo lock; and a full disk ends a run with one clear line, ph's private temp dirs gone and nothing ph wrote left
half-written."""

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from calckit import DONE, FIX, calc_repo

from pyharness.actions import search
from pyharness.actions.base import Context
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace import sandbox
from pyharness.workspace.lock import RepoLock
from pyharness.workspace.tree import Workspace


def returns_within(seconds: float, fn):
    """fn() run in a thread; fails (rather than hangs) when it has not returned after `seconds`."""
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(value=fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s"
    return out["value"]


@pytest.mark.case(69)
def test_fifo_and_sparse_file_neither_block_nor_exhaust(tree):
    tree.write("app.py", "x = 1\n")
    os.mkfifo(tree.repo / "pipe")
    with open(tree.repo / "huge.bin", "wb") as f:
        f.truncate(8 * 2**30)
    ws = Workspace(tree.repo)
    files = returns_within(10, ws.files)
    assert files == ["app.py"]
    first = returns_within(10, ws.state_hash)
    assert returns_within(10, ws.state_hash) == first
    assert returns_within(10, lambda: ws.read_text("app.py")) == "x = 1\n"
    obs = returns_within(10, lambda: search.run(search.Args(pattern="x"), Context(workspace=ws)))
    assert "app.py:1: x = 1" in obs.text


OFF = HarnessConfig.parse_spec("off", None)


REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


def within(seconds: float, fn):
    """fn() in a thread; fails (rather than hangs) when it has not returned after `seconds`. A FIFO that blocks
    the thread is opened for writing afterwards, so the thread ends and the session goes on."""
    out: dict = {}
    thread = threading.Thread(target=lambda: out.update(value=fn()), daemon=True)
    thread.start()
    thread.join(seconds)
    return thread, out


def unblock(*fifos: Path) -> None:
    for fifo in fifos:
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass


@pytest.mark.case(69)
def test_a_fifo_in_a_gitignored_folder_does_not_block_ph_fix(tree):
    calc_repo(tree, git=False)
    tree.write(".gitignore", "data/\n")
    tree.write("data/readme.txt", "x\n")
    os.mkfifo(tree.repo / "data" / "pipe")
    os.mkfifo(tree.repo / "tests" / "conftest_pipe.py")  # one that even looks like a test file
    tree.git_init()
    thread, out = within(90, lambda: run_job(tree.repo, "fix", "", ScriptedModel(replies=[FIX, DONE]),
                                             harness=OFF, config=AgentConfig(max_steps=3)))
    blocked = thread.is_alive()
    unblock(tree.repo / "data" / "pipe", tree.repo / "tests" / "conftest_pipe.py")
    thread.join(10)
    assert not blocked, "ph fix blocked on a FIFO"
    assert out["value"].outcome == "done", out["value"].reason


MAKES_FIFOS = ("import os\n\n"
               "for _p in ('evil.pth', 'tests/evil.pth', 'sitecustomize.py'):\n"
               "    try:\n        os.mkfifo(_p)\n    except OSError:\n        pass\n\n\n"
               "def add(a, b):\n    return a + b\n")


"""A candidate that is right, and at import makes FIFOs where ph (or Python at start-up) would read them."""


@pytest.mark.case(90)
@pytest.mark.parametrize("on", [True, False], ids=["sandbox", "no-sandbox"])
def test_a_fifo_a_candidate_makes_never_blocks_ph(tree, on):
    calc_repo(tree)
    content = json.dumps({"path": "calc.py", "content": MAKES_FIFOS})
    write = f"Action: write {content}"
    fifos = [tree.repo / p for p in ("evil.pth", "tests/evil.pth", "sitecustomize.py")]
    def fix():
        with sandbox.override(on):  # per thread: set in the thread that runs
            return run_job(tree.repo, "fix", "", ScriptedModel(replies=[write, DONE, DONE]), harness=OFF,
                           config=AgentConfig(max_steps=3))

    thread, out = within(90, fix)
    blocked = thread.is_alive()
    unblock(*fifos)
    thread.join(10)
    assert not blocked, "ph blocked on a FIFO the candidate made"
    result = out["value"]
    tree.seen(result.reason)
    if on:  # the sandbox refuses to make a FIFO in the repo: the right fix is done
        assert not any(os.path.lexists(f) for f in fifos)
        assert result.outcome == "done", result.reason
    else:  # they were made; ph read none of them, and the run is not done on a changed start-up file
        assert all(os.path.lexists(f) for f in fifos), ([os.path.lexists(f) for f in fifos], result.reason)
        assert result.outcome == "invalid" and "evil.pth" in result.reason, result.reason
    with RepoLock(tree.repo):  # the lock is free again
        pass


FULL_DISK = r"""
set -e
base="$1"; src="$2"; replies="$3"; tmp_apart="$4"
mount -t tmpfs -o size=6m tmpfs "$base"
cp -a "$src" "$base/repo"
mkdir -p "$base/state" "$base/tmp"
export PH_STATE_DIR="$base/state" TMPDIR="$base/tmp"
if [ "$tmp_apart" = 1 ]; then mkdir -p "$base.tmp"; mount -t tmpfs tmpfs "$base.tmp"; export TMPDIR="$base.tmp"; fi
set +e
"$PH_PYTHON" -m pyharness.cli fix --repo "$base/repo" --model "scripted:$replies" --harness off > "$base.out" 2>&1
echo "exit=$?" >> "$base.out"
find "$base" "$TMPDIR" -xdev \( -name 'ph-sandbox-*' -o -name '*.ph.tmp' -o -name '*.report' -o -name '*.masked' \) \
    -print | sed 's/^/left: /' >> "$base.out"
for f in "$base"/repo/.ph/runs/*.jsonl; do cat "$f"; done > "$base.transcript"
cp "$base/repo/calc.py" "$base.calc"
"""


BALLAST_TEST = ("import os\nfrom calc import add\n\n\ndef test_add():\n"
                "    try:\n"
                "        with open('ballast.bin', 'ab') as f:\n"
                "            while True:\n"
                "                f.write(b'\\0' * 65536)\n"
                "                f.flush()\n"
                "    except OSError:\n"
                "        pass\n"
                "    assert add(1, 2) == 3\n")


"""The judging test fills the disk (its folder's file system) before it asserts."""


def _can_mount_in_a_namespace() -> bool:
    if shutil.which("unshare") is None:
        return False
    done = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "true"], capture_output=True, timeout=30)
    return done.returncode == 0


@pytest.mark.case(91)
@pytest.mark.skipif(not _can_mount_in_a_namespace(), reason="needs unshare and user namespaces to mount a small disk")
@pytest.mark.parametrize("tmp_apart", [False, True], ids=["temp-on-the-full-disk", "temp-elsewhere"])
def test_a_full_disk_ends_the_run_with_one_line_and_leaves_nothing_half_written(tree, tmp_apart):
    calc_repo(tree, test=BALLAST_TEST, git=False)
    tree.write(".gitignore", "ballast.bin\n")
    tree.git_init()
    replies = tree.base / "replies.json"
    replies.write_text(json.dumps([FIX, DONE, DONE]))
    disk = tree.base / "disk"
    disk.mkdir()
    script = tree.base / "full.sh"
    script.write_text(FULL_DISK)
    env = {**os.environ, "PH_PYTHON": sys.executable, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", str(script), str(disk), str(tree.repo),
                    str(replies), "1" if tmp_apart else "0"], env=env, timeout=300, check=True)
    out = (tree.base / "disk.out").read_text()
    tree.seen(out)
    lines = [line for line in out.splitlines() if line.strip() and not line.startswith("·")]
    assert "exit=1" in lines, out
    errors = [line for line in lines if line.startswith("ph: ")]
    assert errors and errors[-1].startswith("ph: the disk is full"), out
    assert "Traceback" not in out
    assert [line for line in lines if line.startswith("left: ")] == []  # no private temp dir, temp file, report
    for line in (tree.base / "disk.transcript").read_text().splitlines():
        json.loads(line)  # every record whole
    assert (tree.base / "disk.calc").read_text() in ("def add(a, b):\n    return a - b\n",
                                                     "def add(a, b):\n    return a + b\n")
