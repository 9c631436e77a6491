"""The fault-localisation hint: which lines of the repo's code ran in the failing test."""

from pyharness.jobs import related_source
from pyharness.linetrace import lines_run
from pyharness.testrun import run_pytest
from pyharness.workspace import Workspace


def test_lines_run_during_the_failing_test_only(orders):
    repo = orders("fix")
    first = run_pytest(repo)
    ran = lines_run(repo, first.failing[0])
    assert ran["orders/pricing.py"] == {17, 19}  # the condition was tested and the 0.0 branch returned
    assert not any(name.startswith("tests/") for name in ran)
    shown = related_source(Workspace(repo), first.first_traceback, ran=ran)
    assert " 17>     if line.quantity > BULK_THRESHOLD:" in shown
    assert " 18|         return round(line.total() * BULK_RATE, 2)" in shown
    assert "(lines marked > ran in the failing test)" in shown


def test_lines_run_is_empty_for_a_missing_test(orders):
    assert lines_run(orders("fix"), "tests/test_nothing.py::test_none") == {}
