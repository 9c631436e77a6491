"""Second list, cases 67 and 68: a pattern from the model or output from the tests cannot make ph's own matching run
past the run's budget."""

import signal
from contextlib import contextmanager
from pathlib import Path

import pytest

from actions import search
from pyharness.agent import AgentConfig
from pyharness.harness.pipeline import HarnessConfig
from pyharness.models.scripted import ScriptedModel
from pyharness.session import run_job
from pyharness.transcript import read_transcript

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
