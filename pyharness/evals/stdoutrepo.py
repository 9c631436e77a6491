"""A stdout task's repo: a fresh git repo holding only tests/test_example.py, the task's visible example as a pytest
test that runs main.py and compares its output byte for byte."""

from pathlib import Path

from pyharness.evals.tasks import StdoutTask
from pyharness.workspace.gitops import snapshot_repo

EXAMPLE_TEST = '''"""The task's example: main.py must print exactly the expected output (checked byte for byte)."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STDIN = {stdin!r}
EXPECTED = {stdout!r}
DRIVER = {driver!r}
TIME_LIMIT = {time_limit!r}


def test_example():
    main = ROOT / "main.py"
    assert main.exists(), "main.py does not exist yet: write the whole program to main.py"
    with tempfile.TemporaryDirectory() as tmp:
        program = Path(tmp) / "main.py"
        program.write_text(main.read_text(encoding="utf-8") + DRIVER, encoding="utf-8")
        env = {{**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT)}}
        try:
            proc = subprocess.run([sys.executable, str(program)], input=STDIN.encode("utf-8"), capture_output=True,
                                  timeout=TIME_LIMIT, cwd=ROOT, env=env)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"main.py did not finish within {{TIME_LIMIT}} s on the example input") from None
    got = proc.stdout.decode("utf-8", errors="replace")
    errors = proc.stderr.decode("utf-8", errors="replace")[-2000:]
    assert proc.returncode == 0, f"main.py exited with code {{proc.returncode}}:\\n{{errors}}"
    if got != EXPECTED:  # one message, without pytest's own diff of the two strings
        raise AssertionError(f"wrong output on the example input {{STDIN!r}}\\nexpected: {{EXPECTED!r}}\\n"
                             f"got:      {{got!r}}\\n{{difference(EXPECTED, got)}}")


def difference(expected, got):
    """The first difference, in words."""
    if got.startswith(expected):
        return f"The expected output is all there, but then main.py printed more: {{got[len(expected):]!r}}"
    if expected.startswith(got):
        return f"The output stops too early; still missing: {{expected[len(got):]!r}}"
    want, have = expected.split("\\n"), got.split("\\n")
    for n, (a, b) in enumerate(zip(want, have), 1):
        if a != b:
            how = "only in spaces" if a.split() == b.split() else "here"
            return f"First difference {{how}}, line {{n}}: expected {{a!r}}, got {{b!r}}"
    return f"expected {{len(want) - 1}} line(s), got {{len(have) - 1}}"
'''


def make_stdout_repo(repo: Path, task: StdoutTask) -> Path:
    """A fresh git repo holding only tests/test_example.py, the visible example as a pytest test."""
    (repo / "tests").mkdir(parents=True)
    (repo / "pytest.ini").write_text(_pytest_ini(), encoding="utf-8")
    (repo / "tests" / "test_example.py").write_text(EXAMPLE_TEST.format(
        stdin=task.example.stdin, stdout=task.example.stdout, driver=task.example.driver,
        time_limit=task.time_limit), encoding="utf-8")
    snapshot_repo(repo, "eval task")
    return repo


def _pytest_ini() -> str:
    # Plugins installed beside pytest (hypothesis alone costs ~1 s) play no part in the example test.
    from importlib.metadata import version

    major, minor = (int(part) for part in version("pytest").split(".")[:2])
    return "[pytest]\n" + ("addopts = --disable-plugin-autoload\n" if (major, minor) >= (8, 4) else "")
