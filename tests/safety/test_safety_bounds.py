"""Case 69: special or huge files in the tree neither block nor exhaust ph."""

import os
import threading

import pytest

from pyharness.actions import search
from pyharness.actions.base import Context
from pyharness.workspace.tree import Workspace


def within(seconds: float, fn):
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
    files = within(10, ws.files)
    assert files == ["app.py"]
    first = within(10, ws.state_hash)
    assert within(10, ws.state_hash) == first
    assert within(10, lambda: ws.read_text("app.py")) == "x = 1\n"
    obs = within(10, lambda: search.run(search.Args(pattern="x"), Context(workspace=ws)))
    assert "app.py:1: x = 1" in obs.text
