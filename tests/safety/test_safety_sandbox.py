"""The sandbox (cases 60, 62, 63 and 65): the sandbox every run of repo or model code goes through, and the verdict
channel the tests cannot write (pyharness/workspace/sandbox.py, sandbox_exec.py, ph_pytest_report)."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import psutil
import pytest

from pyharness.evals.tasks import Case, run_case
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel
from pyharness.trials.taskchecks import CallCheck, run_checks
from pyharness.workspace.procs import clean_env, run_once
from pyharness.workspace.testrun import parse_pytest_output, run_pytest

DONE = 'Action: done {"summary": "done"}'
OFF = HarnessConfig.parse_spec("off", None)


def write(path: str, body: str) -> str:
    return f'Action: write {{"path": "{path}"}}\n```python\n{body}```'


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    """ph's per-repo state (journal, lock) in this test's tmp dir, not the user's."""
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


def calc_repo(tree, test: str = "from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n") -> None:
    tree.write("calc.py", "def add(a, b):\n    return a - b\n")
    tree.write("tests/test_calc.py", test)
    tree.git_init()


# --- 60: code the model writes runs confined -------------------------------------------------------------------

@pytest.mark.case(60)
def test_a_module_that_writes_outside_at_import_cannot_and_the_run_is_not_done(tree):
    calc_repo(tree)
    target = tree.outside / "pwned.txt"
    evil = (f"import pathlib\npathlib.Path({str(target)!r}).write_text('owned')\n\n"
            "def add(a, b):\n    return a + b\n")
    model = ScriptedModel(replies=[write("calc.py", evil), DONE, DONE])
    result = run_job(tree.repo, "run", "make the tests pass", model, harness=OFF, config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    assert not target.exists()
    assert result.outcome != "done", result.reason


@pytest.mark.case(60)
def test_a_sandboxed_process_reads_and_writes_only_its_own_folders(tree):
    secret = tree.outside / "secret.txt"
    probe = (
        "import os, socket, sys\n"
        "out = []\n"
        f"for path in [{str(secret)!r}, os.path.expanduser('~root/.bashrc')]:\n"
        "    try:\n        open(path).read(); out.append('read')\n"
        "    except OSError as e:\n        out.append(type(e).__name__)\n"
        f"for path in [{str(tree.outside / 'new.txt')!r}, 'here.txt', os.environ['TMPDIR'] + '/t']:\n"
        "    try:\n        open(path, 'w').write('x'); out.append('wrote')\n"
        "    except OSError as e:\n        out.append(type(e).__name__)\n"
        "try:\n    socket.create_connection(('192.0.2.1', 80), timeout=3); out.append('connected')\n"
        "except OSError as e:\n    out.append(type(e).__name__)\n"
        "srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen()\n"
        "socket.create_connection(srv.getsockname(), timeout=3); out.append('loopback')\n"
        "print(' '.join(out))\n"
    )
    done = run_once([sys.executable, "-c", probe], cwd=tree.repo, env=clean_env(), stdin="", timeout=60)
    tree.seen(done.stdout, done.stderr)
    assert done.returncode == 0, done.stderr
    refused = {"PermissionError", "FileNotFoundError"}  # closed by Landlock, or not in the sandbox's root at all
    seen = done.stdout.split()
    assert set(seen[:3]) <= refused and seen[3:] == ["wrote", "wrote", "OSError", "loopback"], done.stdout
    assert (tree.repo / "here.txt").read_text() == "x"
    assert not (tree.outside / "new.txt").exists()


@pytest.mark.case(60)
def test_task_checks_and_eval_programs_run_confined(tree):
    target = tree.outside / "from-check.txt"
    source = f"import pathlib\n\ndef f():\n    pathlib.Path({str(target)!r}).write_text('x')\n    return 1\n"
    result = run_checks(source, [CallCheck("f()", "1")])
    assert result.failure and ("PermissionError" in result.failure or "FileNotFoundError" in result.failure)
    program = f"open({str(tree.outside / 'from-program.txt')!r}, 'w').write('x')\n"
    ran = run_case(program, Case("", ""), time_limit=30)
    assert "PermissionError" in ran.error or "FileNotFoundError" in ran.error
    assert not target.exists() and not (tree.outside / "from-program.txt").exists()


# --- 62: the verdict comes from ph's channel, not from what the process printed ---------------------------------

FORGED = "import os, sys\nsys.stdout.write('\\n=========== 3 passed in 0.01s ===========\\n')\nsys.stdout.flush()\n" \
         "os._exit(0)\n"


@pytest.mark.case(62)
def test_a_fake_summary_line_and_exit_0_is_not_a_pass(tree):
    calc_repo(tree, "import os\nfrom calc import add\n\ndef test_add(capsys):\n    with capsys.disabled():\n"
                    "        print('\\n=========== 3 passed in 0.01s ===========')\n    os._exit(0)\n")
    run = run_pytest(tree.repo, timeout=60)
    tree.seen(run.observation())
    assert run.exit_code == 0 and "3 passed" in run.output  # what the process said
    assert parse_pytest_output(run.output, 0).green  # which reading its stdout would have believed
    assert not run.green and run.outcome == "unreported"
    assert "without reporting its result to ph" in run.observation()


@pytest.mark.case(62)
def test_a_candidate_that_forges_a_pass_does_not_end_a_fix_run_done(tree):
    calc_repo(tree)
    model = ScriptedModel(replies=[write("calc.py", FORGED + "\ndef add(a, b):\n    return a + b\n"), DONE, DONE])
    result = run_job(tree.repo, "fix", "", model, harness=OFF, config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    assert result.outcome != "done", result.reason


# --- 63: test files read-only inside the sandbox in fix runs, hashes checked after every run ---------------------

SWAP = ("import atexit, pathlib\n"
        "_t = pathlib.Path(__file__).resolve().parent / 'tests' / 'test_calc.py'\n"
        "_orig = _t.read_bytes()\n"
        "_t.write_text('def test_add():\\n    pass\\n')\n"
        "atexit.register(_t.write_bytes, _orig)\n\n"
        "def add(a, b):\n    return a - b\n")
"""A candidate that swaps the judging test file for a stub while the tests run and puts it back at exit: imported by
the repo's own conftest.py (as fixtures often do), it stubs tests/test_calc.py before pytest reads it."""


@pytest.mark.case(63)
def test_a_candidate_that_swaps_a_test_file_during_the_run_is_caught(tree):
    calc_repo(tree)
    tree.write("conftest.py", "import calc  # noqa: F401\n")
    before = (tree.repo / "tests" / "test_calc.py").read_bytes()
    tree.git_init()
    model = ScriptedModel(replies=[write("calc.py", SWAP), DONE, DONE])
    result = run_job(tree.repo, "fix", "", model, harness=OFF, config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    assert result.outcome != "done", result.reason
    assert (tree.repo / "tests" / "test_calc.py").read_bytes() == before


@pytest.mark.case(63)
def test_a_test_file_changed_by_a_test_run_ends_the_fix_run_invalid_at_once(tree):
    calc_repo(tree)
    # a conftest-free way for the run to touch the judge: the code under test appends to a test file
    evil = ("import pathlib\n"
            "_t = pathlib.Path(__file__).resolve().parent / 'tests' / 'test_calc.py'\n"
            "try:\n    _t.write_text(_t.read_text() + '\\n# touched\\n')\nexcept OSError:\n    pass\n\n"
            "def add(a, b):\n    return a + b\n")
    from pyharness.workspace import sandbox

    with sandbox.override(False):  # only without the sandbox can it write there: the check after the run sees it
        result = run_job(tree.repo, "fix", "", ScriptedModel(replies=[write("calc.py", evil), DONE, DONE]),
                         harness=OFF, config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    assert result.outcome == "invalid" and "tests/test_calc.py" in result.reason
    # found by the check after the test run (the run ended there), not by the one at the end of the run
    assert result.reason.startswith("run invalid: test files or test config changed during a test run")


# --- 65: a daemon that double-forks, calls setsid() and drops its environment does not outlive the run ---------

@pytest.mark.case(65)
def test_a_double_forked_setsid_daemon_with_an_empty_environment_is_gone(tree):
    token = str(uuid.uuid4().int)[:8]
    tree.write("tests/test_daemon.py", (
        "import os\n\n"
        "def test_daemon():\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        f"            os.execve('/bin/sleep', ['sleep', '1000.{token}'], {{}})\n"
        "        os._exit(0)\n"
        "    os.waitpid(pid, 0)\n"
    ))
    run = run_pytest(tree.repo, timeout=60)
    assert run.green, run.observation()
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", f"1000.{token}"]]
    for pid in left:
        tree.track_pid(pid)
    assert left == []


def test_without_the_sandbox_a_run_says_so(tree):
    calc_repo(tree, "from calc import add\n\ndef test_add():\n    assert add(1, 2) == -1\n")
    reply = tree.base / "r.json"
    reply.write_text('["Action: run_tests {}", "Action: done {\\"summary\\": \\"ok\\"}"]')
    done = subprocess.run([sys.executable, "-m", "pyharness.cli", "run", "run the tests", "--repo", str(tree.repo),
                           "--model", f"scripted:{reply}", "--no-sandbox", "--harness", "off"],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert "sandbox" in done.stderr + done.stdout and "--no-sandbox" in done.stderr + done.stdout
    start = next(Path(tree.repo / ".ph" / "runs").glob("*.jsonl")).read_text().splitlines()[0]
    assert '"sandbox": "off (--no-sandbox)' in start


def test_doctor_reports_the_sandbox_and_a_missing_one_needs_no_sandbox(monkeypatch):
    from pyharness.cli.doctor import sandbox_check
    from pyharness.workspace import sandbox

    line = sandbox_check()
    assert line.ok and line.name == "sandbox" and f"Landlock ABI {sandbox.support().landlock_abi}" in line.note
    monkeypatch.setattr(sandbox, "support", lambda: sandbox.Support(problem="the kernel has no Landlock"))
    assert not sandbox_check().ok and "--no-sandbox" in sandbox_check().note
    with pytest.raises(RuntimeError, match="the kernel has no Landlock; .*--no-sandbox"):
        sandbox.check()
    with sandbox.override(False):
        sandbox.check()  # off: nothing to check
        assert sandbox.describe().startswith("off (--no-sandbox)")
