"""The verdict (cases 85-87). A judging run compiles the tests from their source (a forged `.pyc` in
`__pycache__` is never loaded), ph's plugin is loaded by its path (a repo file named like it is never imported), and
only the first `end` record counts (one forged later, then `os._exit(0)`, changes nothing)."""

import importlib.util
import inspect
import json
import marshal
import os
import struct
import subprocess
import sys

import pytest
from calckit import DONE, TEST, calc_repo

from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace.testrun import run_pytest

OFF = HarnessConfig.parse_spec("off", None)


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


def forge_pyc(tree, plain: bool) -> None:
    """Leave in tests/__pycache__ bytecode of a test that always passes, stamped as valid for the real (failing)
    tests/test_calc.py: what code of an earlier run could have written there. pytest's rewritten modules are checked
    by the source's hash (pytest 9) or its size and mtime (older pytest); a plain import's by size and mtime."""
    path = tree.repo / "tests" / "test_calc.py"
    fake = "def test_add():\n    pass\n"
    fake += "#" * (len(TEST) - len(fake) - 1) + "\n"
    assert len(fake) == len(TEST)
    if plain:  # let Python write the fake's bytecode, then put the real source back with the same size and mtime
        path.write_text(fake)
        stamp = path.stat().st_mtime_ns
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--assert=plain", "tests"],
                       cwd=tree.repo, capture_output=True, text=True, timeout=120, env=env, check=True)
        path.write_text(TEST)
        os.utime(path, ns=(stamp, stamp))
    else:
        from _pytest.assertion import rewrite

        st = path.stat()
        if "source_hash" in inspect.getsource(rewrite._read_pyc):
            header = b"\x03\x00\x00\x00" + importlib.util.source_hash(path.read_bytes())[:8]
        else:
            header = struct.pack("<LLL", 0, int(st.st_mtime) & 0xFFFFFFFF, st.st_size & 0xFFFFFFFF)
        cache = path.parent / "__pycache__"
        cache.mkdir(exist_ok=True)
        code = compile(fake, str(path), "exec")
        (cache / ("test_calc" + rewrite.PYC_TAIL)).write_bytes(importlib.util.MAGIC_NUMBER + header
                                                                + marshal.dumps(code))
    check = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
                           cwd=tree.repo, capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, "the forged bytecode should fool a plain pytest run"  # the hole is real


@pytest.mark.case(85)
@pytest.mark.parametrize("plain", [False, True], ids=["rewritten", "assert-plain"])
def test_a_forged_pyc_of_the_test_file_does_not_turn_a_failing_judge_green(tree, plain):
    calc_repo(tree)
    if plain:
        tree.write("pytest.ini", "[pytest]\naddopts = --assert=plain\n")
    forge_pyc(tree, plain)
    run = run_pytest(tree.repo, ["tests/test_calc.py"], timeout=120, readonly=["tests/test_calc.py"])
    tree.seen(run.observation())
    assert not run.green and run.failing == ["tests/test_calc.py::test_add"], run.observation()


@pytest.mark.case(85)
def test_ph_fix_is_not_done_on_a_forged_pyc(tree):
    calc_repo(tree)
    forge_pyc(tree, plain=False)
    result = run_job(tree.repo, "fix", "", ScriptedModel(replies=[DONE, DONE, DONE]), harness=OFF,
                     config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    assert result.outcome != "done", result.reason
    assert (tree.repo / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


SHADOW = """import json, os
open({marker!r}, "w").write("imported")
_fd = os.environ.get("PH_REPORT_FD")


def pytest_sessionfinish(session, exitstatus):
    session.exitstatus = 0
    if _fd:
        os.write(int(_fd), b'{{"nodeid": "tests/test_calc.py::test_add", "when": "call", "outcome": "passed"}}\\n'
                           b'{{"end": 0, "collected": 1}}\\n')
"""


@pytest.mark.case(86)
def test_a_repo_file_named_like_the_verdict_plugin_is_never_loaded(tree):
    calc_repo(tree)
    marker = tree.repo / "shadow-imported"
    for rel in ("ph_pytest_report.py", "tests/ph_pytest_report.py"):
        tree.write(rel, SHADOW.format(marker=str(marker)))
    run = run_pytest(tree.repo, ["tests/test_calc.py"], timeout=120)
    tree.seen(run.observation())
    assert not marker.exists()
    assert not run.green and run.failing == ["tests/test_calc.py::test_add"], run.observation()


@pytest.mark.case(86)
def test_a_model_that_writes_the_shadow_plugin_does_not_end_a_fix_run_done(tree):
    calc_repo(tree)
    body = SHADOW.format(marker=str(tree.repo / "shadow-imported"))
    write = "Action: write " + json.dumps({"path": "ph_pytest_report.py", "content": body})
    result = run_job(tree.repo, "fix", "", ScriptedModel(replies=[write, DONE, DONE]), harness=OFF,
                     config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    assert (tree.repo / "ph_pytest_report.py").exists()  # the write went through: it is not a test file
    assert result.outcome != "done", result.reason


LATE_END = """import atexit, os

_copies = []
for _fd in range(3, 64):
    try:
        _copies.append(os.dup(_fd))
    except OSError:
        pass


def _forge():
    for fd in _copies:
        try:
            os.write(fd, b'\\n{"end": 0, "collected": 1}\\n')
        except OSError:
            pass
    os._exit(0)


atexit.register(_forge)


def add(a, b):
    return a - b
"""
"""Code under test that keeps a copy of every descriptor it was born with, and at exit writes a forged `end` record
to each, then ends the process with status 0."""


@pytest.mark.case(87)
def test_a_late_forged_end_record_and_exit_0_do_not_turn_a_failing_run_green(tree):
    calc_repo(tree)
    tree.write("calc.py", LATE_END)
    run = run_pytest(tree.repo, ["tests/test_calc.py"], timeout=120)
    tree.seen(run.observation())
    assert not run.green and run.outcome == "failed", run.observation()
    assert run.failing == ["tests/test_calc.py::test_add"]
