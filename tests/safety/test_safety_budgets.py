"""Budgets (cases 67 and 68): a pattern from the model or output from the tests cannot make ph's own matching run
past the run's budget."""

import signal
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from pyharness.actions import search
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace.noise import normalise
from pyharness.workspace.testrun import parse_pytest_output, run_pytest

RUN_SECONDS = 30.0
"""The run's time budget in these tests."""


@contextmanager
def ends_within(seconds: float):
    """Fails the test (rather than hanging it) when the block has not ended after `seconds`: the alarm interrupts
    even a regex match stuck in C, which checks for signals."""
    def expire(signum, frame):
        pytest.fail(f"still running after {seconds} s", pytrace=False)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def search_turn(tree, pattern: str):
    """Run a job whose model searches for `pattern` and then stops; its result and the search's transcript turn."""
    reply = f'Action: search {{"pattern": "{pattern}"}}'
    with ends_within(RUN_SECONDS + 10):
        result = run_job(tree.repo, "run", "find it", ScriptedModel(replies=[reply, "Action: done {}"]),
                         harness=HarnessConfig.parse_spec("off", None),
                         config=AgentConfig(max_steps=2, max_seconds=RUN_SECONDS))
    turns = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]
    tree.seen(result.reason, *(t["observation"] for t in turns))
    assert turns[0]["action"]["name"] == "search"
    return result, turns[0]


@pytest.mark.case(67)
def test_a_catastrophic_pattern_ends_within_the_budget_with_a_clear_error(tree):
    tree.write("words.txt", "a" * 40 + "b\n")
    tree.git_init()
    result, turn = search_turn(tree, "(a|aa)+$")
    assert result.seconds < RUN_SECONDS
    assert turn["ok"] is False
    assert "took too long" in turn["observation"] and "catastrophic backtracking" in turn["observation"]
    assert "search for a plain substring or a simpler pattern" in turn["observation"]
    assert "words.txt:1" in turn["observation"]


@pytest.mark.case(67)
def test_the_textbook_catastrophic_pattern_is_answered_in_time(tree):
    # (a+)+$ on a line of 40 a's and a b: Python's re takes hours; the search answers, and finds the line that matches
    tree.write("words.txt", "a" * 40 + "b\naaa\n")
    tree.git_init()
    result, turn = search_turn(tree, "(a+)+$")
    assert result.seconds < RUN_SECONDS
    assert turn["observation"] == "1 matches for '(a+)+$':\nwords.txt:2: aaa"


@pytest.mark.case(67)
def test_matches_found_before_the_time_limit_are_shown_with_a_note(tree, monkeypatch):
    monkeypatch.setattr(search, "SEARCH_SECONDS", 1.0)
    tree.write("a.txt", "aa\n")
    tree.write("b.txt", "a" * 40 + "b\n")
    tree.git_init()
    _, turn = search_turn(tree, "(a|aa)+$")
    lines = turn["observation"].splitlines()
    assert lines[:2] == ["1 matches for '(a|aa)+$':", "a.txt:1: aa"]
    assert "took too long (over 1 s, stuck at b.txt:1" in lines[2]
    assert "the matches above were found before it stopped" in lines[2]


def pytest_output(captured: str) -> str:
    """pytest's `-q --tb=short -rfE` output for 1 failed and 2 passed, the failing test having printed `captured`."""
    return (".F.\n" + "=" * 35 + " FAILURES " + "=" * 35 + "\n" + "_" * 36 + " test_b " + "_" * 36 + "\n"
            "tests/test_a.py:6: in test_b\n    assert 1 + 1 == 3\nE   assert (1 + 1) == 3\n"
            + "-" * 29 + " Captured stdout call " + "-" * 29 + f"\n{captured}\n"
            + "=" * 27 + " short test summary info " + "=" * 28 + "\n"
            "FAILED tests/test_a.py::test_b - assert (1 + 1) == 3\n1 failed, 2 passed in 0.58s\n")


def nested_root(root: str, size: int) -> str:
    """A path that is the root again each time one root is dropped from it (one pass per level, before)."""
    cut = root.index("/", 1) + 1
    levels = size // (len(root) + 1)
    return root[:cut] * levels + root + "/" + (root[cut:] + "/") * levels + "x.py"


MIB = 2**20
PATHOLOGICAL = {
    "summary line with a tail of spaces": lambda root: "1 passed in 0.5s" + " " * MIB + "x",
    "summary line with a tail of ' ='": lambda root: "= 1 passed in 0.5s" + " =" * (MIB // 2) + "x",
    "unclosed progress stats": lambda root: "[1:00," * (MIB // 6),
    "progress bars with unclosed stats": lambda root: "1%||[" * (MIB // 5),
    "the repo's path nested in itself": lambda root: nested_root(root, MIB),
}


@pytest.mark.case(68)
@pytest.mark.parametrize("kind", PATHOLOGICAL)
def test_output_built_to_be_quadratic_is_parsed_in_linear_time(tree, kind):
    root = str(tree.repo)
    raw = pytest_output(PATHOLOGICAL[kind](root))
    started = time.perf_counter()
    with ends_within(20):
        run = parse_pytest_output(normalise(raw, root=root + "/"), 1)
    assert time.perf_counter() - started < 2.0
    assert run.counts == {"failed": 1, "passed": 2}
    assert run.summary_line == "1 failed, 2 passed in <T>s"
    assert run.failing == ["tests/test_a.py::test_b"]
    assert run.first_traceback.startswith("_" * 36 + " test_b ")
    assert run.error_line() == "assert (1 + 1) == 3"


@pytest.mark.case(68)
def test_a_fake_count_of_a_million_digits_as_the_last_summary_is_parsed_in_linear_time(tree):
    # a test that prints it and then spins until the timeout: pytest prints no summary, so the fake one is the last
    raw = ".F\n" + "1" * MIB + " tests in 0.5s\n"
    started = time.perf_counter()
    with ends_within(20):
        run = parse_pytest_output(normalise(raw, root=str(tree.repo) + "/"), -9, timed_out=True)
    assert time.perf_counter() - started < 2.0
    assert run.outcome == "timed out" and run.counts == {}
    assert run.summary_line.endswith("1 tests in <T>s")


@pytest.mark.case(68)
def test_a_test_that_prints_quadratic_output_gets_its_verdict_within_the_test_timeout(tree):
    # a summary line with a 1 MiB tail lands in the capped log's head; long unclosed progress stats in its tail
    tree.write("tests/test_a.py", "def test_a():\n    pass\n\n\ndef test_b():\n"
               "    print('1 passed in 0.5s' + ' ' * 2**20 + 'x')\n"
               "    for _ in range(8):\n        print('[1:00,' * 25_000)\n"
               "    assert 1 + 1 == 3\n\n\ndef test_c():\n    pass\n")
    started = time.monotonic()
    with ends_within(90):
        run = run_pytest(tree.repo, ["tests"], timeout=30)
    assert time.monotonic() - started < 30
    assert run.counts == {"failed": 1, "passed": 2}
    assert run.failing == ["tests/test_a.py::test_b"]
    assert run.summary_line == "1 failed, 2 passed in <T>s"
    shown = run.observation().splitlines()
    assert shown[:2] == ["Tests failed: 1 failed, 2 passed.", "First failing test: tests/test_a.py::test_b"]
