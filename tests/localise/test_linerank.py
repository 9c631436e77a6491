"""Line-level fault localisation: the statements a failing test ran, most suspicious first, each as the lines it
covers (what a cloze candidate masks)."""

from runkit import SHIPPING  # the seeded repo the ranking is tested on

from pyharness.localise.linerank import suspect_lines
from pyharness.localise.linetrace import trace_test
from pyharness.localise.spectrum import spectrum
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace


def make_repo(root, sources: dict[str, str], tests: str):
    (root / "tests").mkdir()
    for name, text in sources.items():
        (root / name).write_text(text)
    (root / "tests" / "test_it.py").write_text(tests)
    return root


def rank(repo, with_spectrum=True):
    """What fix mode would rank: the first failing test traced, the spectrum over the test file (or not)."""
    first = run_pytest(repo)
    assert first.failing, first.output
    trace = trace_test(repo, first.failing[0])
    if with_spectrum:
        trace.scores = spectrum(repo, ["tests/test_it.py"], first.failing)
    return suspect_lines(Workspace(repo), trace, first.first_traceback), trace


def spans(found):
    return [(s.path, s.start, s.end) for s in found]




def test_the_line_only_the_failing_test_ran_ranks_first(tmp_path):
    repo = make_repo(tmp_path, {"shipping.py": SHIPPING}, (
        "from shipping import shipping\n\n\ndef test_light():\n    assert shipping(2) == 5.0\n\n\n"
        "def test_heavy():\n    assert shipping(12) == 6.0\n\n\n"
        "def test_express():\n    assert shipping(2, express=True) == 10.0\n"))
    found, _ = rank(repo)
    assert spans(found)[0] == ("shipping.py", 7, 7)
    assert found[0].score == 1.0 and found[0].reasons == ["ochiai 1.00"]
    # the rest tie (every test ran them): the two traced conditions first, then in file order; line 5 ran only
    # in a passing test, so it is no suspect
    assert [s.start for s in found] == [7, 4, 6, 3, 8]
    assert found[1].reasons == ["ochiai 0.58", "condition traced"]
    assert found[3].reasons == ["ochiai 0.58"]


def test_a_call_over_three_lines_is_one_suspect(tmp_path):
    repo = make_repo(tmp_path, {"label.py": (
        "def label(name, count):\n"
        "    text = '{}: {}'.format(\n"
        "        name.title(),\n"
        "        count + 1)  # the bug: the count is shown as it is\n"
        "    return text\n\n\n"
        "def plain(name):\n    return name\n")}, (
        "from label import label, plain\n\n\ndef test_plain():\n    assert plain('a') == 'a'\n\n\n"
        "def test_label():\n    assert label('apples', 3) == 'Apples: 3'\n"))
    found, trace = rank(repo)
    assert {2, 3, 4} <= trace.lines["label.py"]  # the traced run saw each line of the call...
    assert spans(found) == [("label.py", 2, 4), ("label.py", 5, 5)]  # ...which make one suspect, start to end


def test_a_condition_over_several_lines_is_its_header_not_its_block(tmp_path):
    repo = make_repo(tmp_path, {"grade.py": (
        "def grade(score, bonus):\n"
        "    if (\n"
        "        score + bonus > 90  # the bug: >= was meant\n"
        "        and score > 0\n"
        "    ):\n"
        "        return 'A'\n"
        "    return 'B'\n")}, (
        "from grade import grade\n\n\ndef test_high():\n    assert grade(95, 0) == 'A'\n\n\n"
        "def test_edge():\n    assert grade(85, 5) == 'A'\n"))
    found, _ = rank(repo)
    # the failing test alone returned 'B' (Ochiai 1.0); both tests ran the condition (0.71): from `if (` to `):`
    assert spans(found) == [("grade.py", 7, 7), ("grade.py", 2, 5)]
    assert found[1].reasons == ["ochiai 0.71", "condition traced"]


COUNTER = '''\
"""Counters."""
import functools


def make_counter(start):
    """A counter from start.

    Each call returns the next number."""
    @functools.lru_cache(maxsize=None)
    def step(
            n):
        """One step on."""
        return n + 2  # the bug: one step is 1
    class Box:
        """Holds the first value."""
        value = step(start)
    return Box.value
'''


def test_test_files_and_def_and_docstring_lines_are_never_suspects(tmp_path):
    repo = make_repo(tmp_path, {"counter.py": COUNTER}, (
        "from helpers import first_is\n\n\ndef test_counter():\n    first_is(1, 2)\n"))
    (repo / "tests" / "helpers.py").write_text(  # a test file on the traceback, not a test
        "from counter import make_counter\n\n\ndef first_is(start, value):\n    assert make_counter(start) == value\n")
    for with_spectrum in (True, False):
        found, trace = rank(repo, with_spectrum)
        assert {9, 10, 14, 15} <= trace.lines["counter.py"]  # the decorated def, the class and its docstring ran
        assert {s.path for s in found} == {"counter.py"}
        assert spans(found) == [("counter.py", 13, 13), ("counter.py", 16, 16), ("counter.py", 17, 17)]


def test_without_a_spectrum_the_traceback_frames_come_first_deepest_first(tmp_path):
    repo = make_repo(tmp_path, {
        "app.py": ("from parse import number\n\n\n"
                   "def total(texts):\n"
                   "    values = []\n"
                   "    for text in texts:\n"
                   "        values.append(checked(text))\n"
                   "    return sum(values)\n\n\n"
                   "def checked(text):\n"
                   "    text = text.strip()\n"
                   "    if not text:\n"
                   "        return 0\n"
                   "    return number(text)\n"),
        "parse.py": ("def number(text):\n"
                     "    sign = -1 if text.startswith('-') else 1\n"
                     "    digits = text.lstrip('+-')\n"
                     "    return sign * int(digits)  # the bug: float was meant\n")},
        "from app import total\n\n\ndef test_total():\n    assert total(['1', ' 2.5']) == 3.5\n")
    found, trace = rank(repo, with_spectrum=False)
    assert not trace.scores
    assert spans(found) == [
        ("parse.py", 4, 4), ("app.py", 15, 15), ("app.py", 7, 7),  # the frames, the raising line first
        ("app.py", 13, 13),  # a traced condition
        ("app.py", 5, 5), ("app.py", 6, 6), ("app.py", 12, 12), ("parse.py", 2, 2), ("parse.py", 3, 3)]
    assert found[0].reasons == ["ran in failing test", "on traceback"]
    assert found[3].reasons == ["ran in failing test", "condition traced"]
    assert found[0].holds("parse.py", 4) and not found[0].holds("app.py", 4)


AGES = '''\
def check(age):
    """An age as given, when it is one."""
    if age > 0:  # the bug: negative ages were meant
        raise ValueError(f"not an age: {age}")
    return age
'''


def test_an_if_that_raises_comes_just_before_its_raise(tmp_path):
    repo = make_repo(tmp_path, {"ages.py": AGES}, (
        "from ages import check\n\n\ndef test_zero():\n    assert check(0) == 0\n\n\n"
        "def test_grown():\n    assert check(40) == 40\n"))
    found, _ = rank(repo)
    assert spans(found)[:2] == [("ages.py", 3, 3), ("ages.py", 4, 4)]  # the guard has the raise's evidence
    assert found[0].score == found[1].score == 1.0


def test_ties_go_to_the_module_the_failing_test_file_is_named_after(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "alpha.py").write_text("def double(x):\n    return x * 2\n")
    (tmp_path / "zeta.py").write_text("from alpha import double\n\n\ndef quad(x):\n    return double(double(x)) + 1\n")
    (tmp_path / "tests" / "test_zeta.py").write_text(
        "from zeta import quad\n\n\ndef test_quad():\n    assert quad(1) == 4\n")
    first = run_pytest(tmp_path)
    trace = trace_test(tmp_path, first.failing[0])
    trace.scores = spectrum(tmp_path, ["tests/test_zeta.py"], first.failing)
    found = suspect_lines(Workspace(tmp_path), trace, first.first_traceback)
    assert [s.path for s in found[:2]] == ["zeta.py", "alpha.py"]  # every line scores 1.0: zeta first, not a-z
    assert found[0].score == found[1].score == 1.0



HINT = (
    "def usage(name):\n"
    "    return f'Usage: {name} [OPTIONS]'\n\n\n"
    "def hint(name, option):\n"
    "    text = usage(name)\n"
    "    return text + '\\n' + f\"Try '{name} {option}' for help.\"\n")


def test_among_ties_the_line_whose_string_the_error_quotes_comes_first(tmp_path):
    repo = make_repo(tmp_path, {"cli.py": HINT}, (
        "from cli import hint\n\n\ndef test_hint():\n"
        "    assert hint('app', '-h').splitlines()[1] == \"Try 'app --help' for help.\"\n"))
    found, _ = rank(repo)
    assert spans(found)[0] == ("cli.py", 7, 7) and "message quoted" in found[0].reasons
    assert found[0].score == found[1].score  # one failing test, every line it ran ties on the spectrum
