"""Running tests (cases 29, 38-44): real pytest subprocesses on tiny repos; timeouts, process trees, output, env."""

import json
import os
import signal
import subprocess
import sys
import time
import tracemalloc
import uuid
from pathlib import Path

import psutil
import pytest

from pyharness.evals.tasks import Case, run_case
from pyharness.harness.pipeline import HarnessConfig
from pyharness.localise.linetrace import trace_test
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.trials.taskchecks import CallCheck, run_checks
from pyharness.workspace.procs import clean_env
from pyharness.workspace.testrun import run_pytest

WT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _pids(path: Path, n: int, seconds: float = 30.0) -> list[int]:
    """The n pids a tiny test wrote to `path` (one a line), waiting for them. In the sandbox they are pids of its
    own PID namespace: they prove the processes were started, `_host` finds them from here."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists():
            lines = path.read_text().split()
            if len(lines) >= n:
                return [int(x) for x in lines[:n]]
        time.sleep(0.05)
    raise AssertionError(f"the tiny test did not write {n} pids to {path}")


def _host(token: str) -> list[int]:
    """Host pids of the live `sleep` grandchildren a `_spawner` test with `token` started, and of their pytest."""
    found = set()
    for p in psutil.process_iter(["cmdline"]):
        if (p.info["cmdline"] or [])[:1] == ["sleep"] and token in " ".join(p.info["cmdline"]) and _alive(p.pid):
            found.add(p.pid)
            try:
                found.add(p.parent().pid)
            except (psutil.Error, AttributeError):
                pass
    return sorted(pid for pid in found if _alive(pid))


def _spawner(pidfile: Path, then: str, token: str) -> str:
    """A test that starts a plain and a setsid `sleep 1000.TOKEN` grandchild, writes their pids, then does `then`."""
    return (
        "import os, signal, subprocess, time\n\n"
        "def test_spawns():\n"
        f"    plain = subprocess.Popen(['sleep', '1000.{token}1'])\n"
        f"    escaped = subprocess.Popen(['sleep', '1000.{token}2'], start_new_session=True)\n"
        f"    with open({str(pidfile)!r}, 'w') as f:\n"
        "        f.write(f'{plain.pid}\\n{escaped.pid}\\n{os.getpid()}\\n')\n"
        f"    {then}\n"
    )


# --- 38: an endless test is stopped at the configured timeout, with its own outcome -----------------------------

@pytest.mark.case(38)
def test_endless_test_is_stopped_at_the_configured_timeout(tree):
    spinning = tree.repo / "spinning"  # the sandbox lets a test write only its repo
    tree.write("tests/test_spin.py", "import pathlib\n\ndef test_spin():\n"
                                     f"    pathlib.Path({str(spinning)!r}).touch()\n    while True:\n        pass\n")
    before = tree.repo_hash()
    started = time.monotonic()
    run = run_pytest(tree.repo, timeout=5)
    took = time.monotonic() - started
    assert spinning.exists(), "the test never started spinning (pytest took over 5 s to start?)"
    spinning.unlink()
    assert run.timed_out and run.outcome == "timed out" and not run.green
    assert run.summary().startswith("tests timed out after 5 s")
    assert run.observation().startswith("Tests stopped: tests timed out after 5 s")
    assert "failed" not in run.observation().splitlines()[0]
    assert took < 5 + 2, f"the run took {took:.1f} s with a 5 s limit"
    assert tree.repo_hash() == before


@pytest.mark.case(38)
def test_the_loop_passes_the_configured_timeout_to_run_tests(tree):
    tree.write("calc.py", "def spin():\n    while True:\n        pass\n")
    tree.write("tests/test_calc.py", "from calc import spin\n\ndef test_spin():\n    spin()\n")
    tree.git_init()
    result = run_job(tree.repo, "run", "make the tests pass", ScriptedModel(replies=["Action: run_tests {}"]),
                     harness=HarnessConfig.parse_spec("off", None), config=AgentConfig(max_steps=1), test_timeout=2)
    turns = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]
    tree.seen(*(t["observation"] for t in turns))
    assert turns[0]["action"]["name"] == "run_tests"
    assert "tests timed out after 2 s" in turns[0]["observation"]
    assert not turns[0]["observation"].startswith("Tests failed")


# --- 39 and 29: grandchildren, setsid escapees, Ctrl-C ---------------------------------------------------------

@pytest.mark.case(39)
def test_background_grandchildren_are_gone_after_a_test_that_exits(tree):
    pidfile, token = tree.repo / "pids.txt", str(uuid.uuid4().int)[:8]
    tree.write("tests/test_bg.py", _spawner(pidfile, "assert True", token))
    run = run_pytest(tree.repo, timeout=60)
    _pids(pidfile, 3)  # they were started
    assert run.green, run.output
    assert _host(token) == [], "a grandchild (plain or setsid) outlived the test run"


@pytest.mark.case(39)
def test_background_grandchildren_are_gone_after_a_timeout(tree):
    pidfile, token = tree.repo / "pids.txt", str(uuid.uuid4().int)[:8]
    tree.write("tests/test_bg.py", _spawner(pidfile, "time.sleep(1000)", token))
    run = run_pytest(tree.repo, timeout=3)
    _pids(pidfile, 3)
    assert run.outcome == "timed out"
    assert _host(token) == [], "pytest or a grandchild outlived the timeout"


DRIVER = """
import sys
from pathlib import Path
from pyharness.workspace.testrun import run_pytest
try:
    run_pytest(Path(sys.argv[1]), timeout=120)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(130)
print("finished", flush=True)
"""


@pytest.mark.case(29)
def test_ctrl_c_while_tests_run_ends_the_whole_tree_within_a_second(tree):
    pidfile, token = tree.repo / "pids.txt", str(uuid.uuid4().int)[:8]
    # pytest itself ignores TERM here, so only the KILL after the grace period ends it
    ignore_term = "signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(1000)"
    tree.write("tests/test_hang.py", _spawner(pidfile, ignore_term, token))
    driver = subprocess.Popen([sys.executable, "-c", DRIVER, str(tree.repo)], cwd=tree.base,
                              env={**os.environ, "PYTHONPATH": str(WT)}, stdout=subprocess.PIPE, text=True)
    tree.track_pid(driver.pid)
    _pids(pidfile, 3)
    pids = _host(token)
    assert len(pids) == 3, pids  # the two sleeps and their pytest, seen from here
    for pid in pids:
        tree.track_pid(pid)
    assert all(_alive(pid) for pid in pids)
    driver.send_signal(signal.SIGINT)
    sent = time.monotonic()
    while any(_alive(pid) for pid in pids) and time.monotonic() - sent < 5:
        time.sleep(0.01)
    gone_after = time.monotonic() - sent
    out, _ = driver.communicate(timeout=10)
    assert not any(_alive(pid) for pid in pids)
    assert gone_after < 1.0, f"the tree took {gone_after:.2f} s to go"
    assert driver.returncode == 130 and out.strip() == "interrupted"


# --- 40: a huge output: bounded memory, a capped log on disk, head and tail for the model -----------------------

@pytest.mark.case(40)
def test_fifty_megabytes_of_output_stay_bounded(tree):
    tree.write("tests/test_loud.py", "def test_loud():\n    for i in range(500_000):\n"
                                     "        print(f'{i:08d} ' + 'x' * 90)\n    assert False, 'loud and wrong'\n")
    tracemalloc.start()
    try:
        run = run_pytest(tree.repo, timeout=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20, f"ph held {peak / 2**20:.1f} MiB while pytest printed about 50 MB"
    assert run.outcome == "failed" and run.failing == ["tests/test_loud.py::test_loud"]
    assert run.log_path is not None and run.log_path.stat().st_size < 2**20 + 200
    assert run.log_path.stat().st_mode & 0o077 == 0
    assert run.omitted_lines > 400_000
    log = run.log_path.read_text(encoding="utf-8", errors="replace")
    assert "lines omitted] ..." in log and log.rstrip().endswith("1 failed in " + log.rstrip().split(" in ")[-1])
    seen = run.observation()
    tree.seen(seen)
    assert len(seen.encode()) <= 10 * 1024 and len(seen.splitlines()) <= 256
    assert "lines omitted] ..." in seen
    assert seen.startswith("Tests failed: 1 failed.")
    assert run.summary_line == "1 failed in <T>s" and run.summary_line in seen
    assert str(run.log_path) in seen


# --- 41: pytest's exit codes are distinct outcomes --------------------------------------------------------------

EXIT_REPOS = {
    0: {"tests/test_a.py": "def test_a():\n    pass\n"},
    1: {"tests/test_a.py": "def test_a():\n    assert 1 == 2\n"},
    2: {"tests/test_a.py": "def test_a():\n    raise KeyboardInterrupt\n"},
    3: {"conftest.py": "def pytest_collection_modifyitems(items):\n    raise RuntimeError('boom')\n",
        "tests/test_a.py": "def test_a():\n    pass\n"},
    4: {"conftest.py": "import no_such_module_xyz\n", "tests/test_a.py": "def test_a():\n    pass\n"},
    5: {"calc.py": "X = 1\n"},
    6: {"pytest.ini": "[pytest]\nmax_warnings = 0\n",
        "tests/test_a.py": "import warnings\n\ndef test_a():\n    warnings.warn('careful')\n"},
}
OUTCOMES = {0: "passed", 1: "failed", 2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests",
            6: "too many warnings"}


@pytest.mark.case(41)
def test_each_pytest_exit_code_is_its_own_outcome(tree):
    seen = {}
    for code, files in EXIT_REPOS.items():
        repo = tree.repo / f"exit{code}"
        for rel, text in files.items():
            tree.write(f"exit{code}/{rel}", text)
        run = run_pytest(repo, timeout=60)
        tree.seen(run.observation())
        assert run.exit_code == code, (code, run.output)
        assert run.outcome == OUTCOMES[code]
        assert run.green == (code == 0), code
        seen[code] = run.summary()
    assert len(set(seen.values())) == len(seen), seen
    assert seen[5] == "no tests ran (pytest collected no tests)"
    assert "conftest.py that fails to import" in seen[4]
    assert "internal error" in seen[3] and "interrupted" in seen[2] and "warnings" in seen[6]


# --- 42: what the model sees is normalised --------------------------------------------------------------------

@pytest.mark.case(42)
def test_output_is_normalised_and_undecodable_bytes_are_replaced(tree):
    tree.write("tests/test_noise.py", (
        "import sys, tempfile\n\n"
        "def test_noise(tmp_path):\n"
        "    print('step took 0.12s; scratch in', tempfile.mkdtemp(), 'and', tmp_path)\n"
        "    sys.stdout.flush()\n"
        "    sys.stdout.buffer.write(b'bad bytes: \\xff\\xfe\\x80 end\\n')\n"
        "    sys.stdout.buffer.flush()\n"
        "    assert False\n"
    ))
    first, second = run_pytest(tree.repo, timeout=60), run_pytest(tree.repo, timeout=60)
    tree.seen(first.output)
    assert first.outcome == "failed"
    assert "0.12s" not in first.output and "step took <T>s" in first.output
    assert "/tmp/" not in first.output and str(tree.base) not in first.output
    assert "scratch in <tmp> and <tmp>" in first.output
    assert "bad bytes: \ufffd\ufffd\ufffd end" in first.output
    assert first.summary_line == "1 failed in <T>s"
    assert first.observation() == second.observation()


# --- 43: the environment of every run of repo code is scrubbed -------------------------------------------------

SECRETS = {
    "GITHUB_TOKEN": "plain-value-1", "AWS_SECRET_ACCESS_KEY": "plain-value-2", "DB_PASSWORD": "plain-value-3",
    "MY_AUTH_HEADER": "plain-value-4", "GOOGLE_APPLICATION_CREDENTIALS": "/x/creds.json",
    "SIGNING_PRIVATE": "plain-value-5", "CLIENT_CERT": "plain-value-6", "api_key": "plain-value-7",
    "NOTE_AWS": "AKIAIOSFODNN7EXAMPLE", "NOTE_GH": "ghp_" + "a1B2" * 9, "NOTE_PAT": "github_pat_" + "Z9y8" * 6,
    "NOTE_OPENAI": "sk-" + "q" * 40, "NOTE_SLACK": "xoxb-1234-5678-abcdef",
    "NOTE_PEM": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Blbn\n-----END OPENSSH PRIVATE KEY-----",
    "NOTE_URL": "https://bob:hunter2@example.com/repo.git",
}
KEPT = {"NOTE_PLAIN": "hello world", "NOTE_URL_PLAIN": "https://example.com/a:b", "NOTE_SKY": "sky-blue"}
ENV_DUMP = "import json, os\n\ndef dump(path):\n    json.dump(dict(os.environ), open(path, 'w'))\n"


@pytest.fixture
def secret_env(monkeypatch):
    for k, v in {**SECRETS, **KEPT}.items():
        monkeypatch.setenv(k, v)


def _assert_scrubbed(env: dict[str, str]) -> None:
    assert not set(SECRETS) & set(env), sorted(set(SECRETS) & set(env))
    assert not any(v in env.values() for v in SECRETS.values())
    for k, v in KEPT.items():
        assert env.get(k) == v, k
    assert env.get("PATH") == os.environ["PATH"]


@pytest.mark.case(43)
def test_clean_env_drops_secret_names_and_secret_looking_values(secret_env):
    _assert_scrubbed(clean_env())
    assert clean_env({"EXTRA": "1"})["EXTRA"] == "1"


@pytest.mark.case(43)
def test_pytest_and_the_fix_trace_get_a_scrubbed_env(tree, secret_env):
    tree.write("envdump.py", ENV_DUMP)
    tree.write("tests/test_env.py", f"from envdump import dump\n\ndef test_env():\n"
                                    f"    dump({str(tree.repo / 'pytest-env.json')!r})\n    assert False\n")
    run = run_pytest(tree.repo, timeout=60)
    assert run.failing == ["tests/test_env.py::test_env"]
    _assert_scrubbed(json.loads((tree.repo / "pytest-env.json").read_text()))
    (tree.repo / "pytest-env.json").unlink()
    trace_test(tree.repo, run.failing[0], timeout=60)
    _assert_scrubbed(json.loads((tree.repo / "pytest-env.json").read_text()))


@pytest.mark.case(43)
def test_task_checks_and_program_runs_get_a_scrubbed_env(tree, secret_env):
    names = sorted(SECRETS)
    source = f"import os\n\ndef leaked():\n    return [k for k in {names!r} if k in os.environ]\n"
    assert run_checks(source, [CallCheck("leaked()", "[]")]).failure == ""
    assert run_checks(source.replace(f"{names!r}", "['NOTE_PLAIN']"), [CallCheck("leaked()", "[]")]).failure
    program = "import os\nprint(sorted(k for k in os.environ if k.startswith(('NOTE_', 'GITHUB', 'DB_'))))\n"
    out = run_case(program, Case("", ""), time_limit=30).stdout
    assert eval(out) == sorted(KEPT)


# --- 44: running tests runs the repository's code, and ph says so --------------------------------------------

@pytest.mark.case(44)
def test_fix_help_says_tests_run_the_repositorys_code(tree):
    done = subprocess.run([sys.executable, "-m", "pyharness.cli", "fix", "--help"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(WT), "COLUMNS": "200"}, cwd=tree.base)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "runs the repository's code" in text and "trust" in text
