"""The fault-localisation hint: which lines of the repo's code ran in the failing test, and what
its branch conditions saw."""

from pyharness.localise.linetrace import trace_test
from pyharness.loop.jobs import related_source
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace


def test_lines_run_during_the_failing_test_only(orders):
    repo = orders("fix")
    first = run_pytest(repo)
    ran = trace_test(repo, first.failing[0])
    assert ran.lines["orders/pricing.py"] == {17, 19}  # the condition was tested and the 0.0 branch returned
    assert not any(name.startswith("tests/") for name in ran.lines)
    assert ran.notes["orders/pricing.py"] == {17: "line.quantity=10, BULK_THRESHOLD=10 -> False"}
    shown = related_source(Workspace(repo), first.first_traceback, ran=ran)
    assert " 17>     if line.quantity > BULK_THRESHOLD:\n     (in the failing test: line.quantity=10, " in shown
    assert " 18|         return round(line.total() * BULK_RATE, 2)" in shown
    assert "(lines marked > ran in the failing test)" in shown


def test_conditions_with_calls_are_not_evaluated(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "calc.py").write_text(
        "LIMIT = 3\nCALLS = []\n\ndef side():\n    CALLS.append(1)\n    return True\n\n"
        "def check(items):\n    if side() and len(items) > LIMIT:\n        return 'big'\n"
        "    while items and items[0] < LIMIT:\n        items = items[1:]\n"
        "    if not items:\n        return 'empty'\n    return 'small'\n"
    )
    (tmp_path / "tests" / "test_calc.py").write_text(
        "from calc import CALLS, check\n\ndef test_check():\n"
        "    assert check([1, 2]) == 'small'\n    assert CALLS == [1]\n"
    )
    first = run_pytest(tmp_path)
    ran = trace_test(tmp_path, first.failing[0])
    assert 9 in ran.lines["calc.py"] and 13 in ran.lines["calc.py"]
    # line 9 calls side() and line 11 subscripts: neither is evaluated by the tracer (CALLS stays [1])
    assert ran.notes["calc.py"] == {13: "items=[] -> True"}
    assert "assert 'empty' == 'small'" in first.first_traceback


def test_trace_is_empty_for_a_missing_test(orders):
    ran = trace_test(orders("fix"), "tests/test_nothing.py::test_none")
    assert ran.lines == {} and ran.notes == {}
