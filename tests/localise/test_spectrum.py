"""Spectrum-based fault localisation: lines the failing tests ran and the passing ones did not come first."""

import math

from pyharness.actions.base import Context
from pyharness.localise.linetrace import RunTrace, trace_test
from pyharness.localise.spectrum import ochiai, spectrum
from pyharness.loop.jobs import Job
from pyharness.trials.suspects import suspects
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace

COUNTS = '''\
class Cache:
    def __init__(self):
        self.data = {}

    def get(self, key, default=None):
        return self.data.get(key, default)


class Threshold:
    def __init__(self, limit):
        self.limit, self.counts = limit, {}

    def get(self, key, default=0):
        return self.counts.get(key, default)

    def add(self, key):
        self.counts[key] = self.counts.get(key, 0) + 1
        if len(self.counts) >= self.limit:  # the bug: > was meant
            self.counts = {k: v for k, v in self.counts.items() if v > 1}


def double(x): return x * 2
'''

TESTS = '''\
from counts import Cache, Threshold, double


def test_cache_get():
    assert Cache().get("a") is None


def test_threshold_empty():
    assert Threshold(2).get(1) == 0


def test_double():
    assert double(2) == 4


def test_threshold_keeps_below_limit():
    t = Threshold(2)
    t.add(1)
    t.add(2)
    assert t.get(1) == 1
'''


def make_repo(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "counts.py").write_text(COUNTS)
    (tmp_path / "tests" / "test_counts.py").write_text(TESTS)
    return tmp_path


def test_ochiai():
    assert ochiai(1, 0, 1) == 1.0
    assert math.isclose(ochiai(1, 3, 1), 0.5)
    assert math.isclose(ochiai(1, 0, 4), 0.5)
    assert ochiai(0, 5, 1) == 0.0 and ochiai(1, 1, 0) == 0.0


def test_scores_rank_the_lines_only_the_failing_test_ran(tmp_path):
    repo = make_repo(tmp_path)
    scores = spectrum(repo, ["tests/test_counts.py"])
    assert set(scores) == {"counts.py"}  # test files are not scored
    lines = scores["counts.py"]
    assert lines[18] == lines[19] == 1.0  # add's comparison and the pruning it wrongly did: the failing test only
    assert math.isclose(lines[14], 1 / math.sqrt(2))  # Threshold.get: the failing test and one passing test
    assert 6 not in lines and 22 not in lines  # Cache.get and double ran in passing tests only


def test_past_its_deadline_the_run_stops_and_keeps_what_it_counted(tmp_path):
    repo = make_repo(tmp_path)
    # stops after the first test (a passing one): no failing test was seen, so nothing is suspicious
    assert spectrum(repo, ["tests/test_counts.py"], seconds=0.0) == {}
    failing = ["tests/test_counts.py::test_threshold_keeps_below_limit"]
    cut = spectrum(repo, ["tests/test_counts.py"], failing, seconds=0.0)  # the failing test ran first, alone
    assert cut["counts.py"][14] == cut["counts.py"][18] == 1.0
    assert spectrum(repo, ["tests/test_missing.py"]) == {}


def test_the_spectrum_puts_the_buggy_method_before_the_one_the_traceback_names(tmp_path):
    repo = make_repo(tmp_path)
    first = run_pytest(repo)
    failing = first.failing[0]
    assert "get" in first.first_traceback  # `assert t.get(1) == 1`: the assertion names get, the bug is in add
    ws = Workspace(repo)
    ran = trace_test(repo, failing)
    before = suspects(ws, first.first_traceback, ran, failing)
    assert [u.name for u in before] == ["Cache.get", "Threshold.get"]  # by name only: both gets, neither the bug
    ran.scores = spectrum(repo, ["tests/test_counts.py"])
    after = suspects(ws, first.first_traceback, ran, failing)
    assert after[0].name == "Threshold.add"
    assert after[0].start == 16 and after[0].end == 19


def test_a_one_line_function_can_be_a_suspect(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "calc.py").write_text("def double(x): return x + x + 1\n\n\n"
                                      "def quad(x):\n    return double(x) * 2\n\n\n"
                                      "def half(x): return x / 2\n")
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import quad, half\n\ndef test_half():\n    assert half(4) == 2\n\n"
        "def test_quad():\n    assert quad(2) == 8\n")
    first = run_pytest(tmp_path)
    ran = trace_test(tmp_path, first.failing[0])
    ran.scores = spectrum(tmp_path, ["tests/test_calc.py"])
    assert ran.scores["calc.py"] == {1: 1.0, 5: 1.0}
    found = suspects(Workspace(tmp_path), first.first_traceback, ran, first.failing[0])
    assert [u.name for u in found] == ["quad", "double"]  # tied; quad is the one the test names


def test_fix_mode_works_out_the_spectrum_unless_its_layer_is_off(tmp_path):
    repo = make_repo(tmp_path)
    for on in (True, False):
        ws = Workspace(repo)
        job = Job("fix")
        job.prepare(ws, Context(workspace=ws, spectrum=on))
        assert job.failing_before == ["tests/test_counts.py::test_threshold_keeps_below_limit"]
        assert isinstance(job.trace, RunTrace) and job.trace.lines
        assert bool(job.trace.scores) is on
        assert job.example_path(ws) == "counts.py"
        job.cleanup()


def test_suspects_sharing_a_name_each_take_the_reply_function_most_like_their_own(tmp_path):
    from pyharness.trials.suspects import FixTarget

    repo = make_repo(tmp_path)
    first = run_pytest(repo)
    target = FixTarget(Workspace(repo), first.failing[0], "", first.first_traceback, trace_test(repo, first.failing[0]))
    assert [u.name for u in target.units] == ["Cache.get", "Threshold.get"]
    ws = Workspace(repo)
    # one function given: it goes to the namesake it is like (Threshold.get), not to both
    one = target.apply("def get(self, key, default=0):\n    return self.counts.get(key, default) + 0\n", ws)
    text = one["counts.py"]
    assert "        return self.counts.get(key, default) + 0\n" in text
    assert "        return self.data.get(key, default)\n" in text
    # two given, in either order: each to its own
    two = target.apply("def get(self, key, default=0):\n    return self.counts.get(key, default) + 0\n\n"
                       "def get(self, key, default=None):\n    return self.data.get(key, default) or None\n", ws)
    assert "        return self.data.get(key, default) or None\n" in two["counts.py"]
    assert "        return self.counts.get(key, default) + 0\n" in two["counts.py"]
    # a method given inside its class goes to that class's method
    held = target.apply("class Cache:\n    def get(self, key, default=None):\n        return None\n", ws)
    assert held["counts.py"].count("        return None\n") == 1
    assert "        return self.counts.get(key, default)\n" in held["counts.py"]


def test_a_huge_failure_keeps_every_candidate_prompt_small(tmp_path):
    """A mutant of more_itertools failed with a traceback that made the first candidate's prompt 34,223 tokens
    (the model's context is 8,192): the run ended in an error before any candidate. The traceback, the failure
    a repair is shown and each constant beside the suspects are cut to their head and tail."""
    from pyharness.trials.candidates import Attempt, Framing
    from pyharness.trials.suspects import FixTarget
    from pyharness.trials.verdicts import failure_text

    (tmp_path / "tests").mkdir()
    table = ",\n".join(f"    {n}: {n * n}" for n in range(3000))
    (tmp_path / "squares.py").write_text(
        f"SQUARES = {{\n{table}\n}}\n\n\ndef square(n):\n    if n in SQUARES:\n        return SQUARES[n] + 1\n"
        "    raise ValueError('no square for ' + repr(list(range(20000))))\n")
    (tmp_path / "tests" / "test_squares.py").write_text(
        "from squares import square\n\n\ndef test_square():\n    assert square(3) == 9\n\n\n"
        "def test_missing():\n    square(-1)\n")
    first = run_pytest(tmp_path, ["tests/test_squares.py::test_missing"])
    assert len(first.first_traceback) > 100_000  # the whole message is in the traceback
    target = FixTarget(Workspace(tmp_path), first.failing[0], "", first.first_traceback,
                       trace_test(tmp_path, first.failing[0]))
    assert [u.name for u in target.units] == ["square"]
    best = Attempt(target.units[0].code, failure_text(first))
    assert len(best.failure) <= 3000 and "ValueError" in first.first_traceback
    for kind in ("plain", "plan", "repair", "line", "spec", "guesses"):
        message = target.message(Framing(kind, 0.0), best, ["sample 1: " + best.failure])
        assert len(message) < 16_000, kind  # about 4,500 tokens: it fits the 8,192 context
        assert "tests/test_squares.py::test_missing" in message and "SQUARES" in message
