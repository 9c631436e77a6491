"""How far a failing test got, read from pytest's short tracebacks (what `stacking` counts as a partial fix)."""

from pyharness.workspace.failpoints import FailPoint, fail_points, progress

OUTPUT = '''FFF                                                                      [100%]
=================================== FAILURES ===================================
_______________________________ TestF.test_f[1] ________________________________
tests/test_m.py:8: in test_f
    assert f({"b": v}) == v
           ^^^^^^^^^^^
mod.py:2: in f
    return x["a"]
           ^^^^^^
E   KeyError: 'a'
____________________________________ test_g ____________________________________
tests/test_m.py:12: in test_g
    assert g(2) == 4
E   assert 3 == 4
E    +  where 3 = g(2)
____________________________________ test_h ____________________________________
tests/test_m.py:15: in test_h
    check(g(2))
tests/test_m.py:4: in check
    assert value == 4
E   assert 3 == 4
=========================== short test summary info ============================
FAILED tests/test_m.py::TestF::test_f[1] - KeyError: 'a'
FAILED tests/test_m.py::test_g - assert 3 == 4
FAILED tests/test_m.py::test_h - assert 3 == 4
'''
IDS = ["tests/test_m.py::TestF::test_f[1]", "tests/test_m.py::test_g", "tests/test_m.py::test_h"]


def test_each_failing_test_has_the_line_it_reached_and_whether_its_own_assertion_failed():
    assert fail_points(OUTPUT, IDS) == {IDS[0]: FailPoint(8, False), IDS[1]: FailPoint(12, True),
                                        IDS[2]: FailPoint(15, True)}  # a helper's assert in the test file counts
    assert fail_points(OUTPUT, ["tests/test_m.py::test_gone"]) == {}
    assert fail_points("", IDS) == {}


def test_a_later_line_or_the_tests_own_assertion_is_further_and_the_reverse_falls_back():
    before = {"a": FailPoint(8, False), "b": FailPoint(12, True), "c": FailPoint(20, True)}
    after = {"a": FailPoint(8, True), "b": FailPoint(12, True), "c": FailPoint(18, True)}
    assert progress(before, after) == (["a"], ["c"])
    assert progress(before, {"a": FailPoint(9, False)}) == (["a"], [])  # b and c pass now: neither list
