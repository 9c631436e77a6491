"""loops: repeats on an unchanged workspace escalate hint → redirect → stop; progress never counts as a loop."""

from pathlib import Path

from pyharness.harness.call import ActionCall
from pyharness.harness.loops import HALT, HINT, NONE, REDIRECT, LoopDetector, call_label
from pyharness.workspace.tree import Workspace


def make_repo(tmp_path: Path) -> Path:
    (tmp_path / "orders").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "orders" / "tax.py").write_text("RATE = 0.2\n", encoding="utf-8")
    (tmp_path / "tests" / "test_tax.py").write_text("def test_rate():\n    assert True\n", encoding="utf-8")
    return tmp_path


def key(name: str, **args: object) -> str:
    return ActionCall(name, dict(args)).key()


READ_TAX = key("read", path="orders/tax.py")
RUN_TESTS = key("run_tests")


def test_edit_then_test_cycles_are_never_a_loop(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    detector = LoopDetector()
    for n in range(6):
        (repo / "orders" / "tax.py").write_text(f"RATE = 0.{n}\n", encoding="utf-8")
        edited = Workspace(repo).state_hash()
        assert detector.observe(key("edit", path="orders/tax.py"), edited).level == NONE
        assert detector.observe(RUN_TESTS, edited).level == NONE


def test_same_read_on_same_state_escalates_to_stop(tmp_path: Path) -> None:
    state = Workspace(make_repo(tmp_path)).state_hash()
    detector = LoopDetector()
    verdicts = [detector.observe(READ_TAX, state) for _ in range(4)]
    assert [v.level for v in verdicts] == [NONE, HINT, REDIRECT, HALT]
    assert [v.kind for v in verdicts] == ["", "repeat", "repeat", "repeat"]
    assert verdicts[1].message == (
        "You already ran `read orders/tax.py` on the same files and got the same result; "
        "do something different: its content is above; edit the file or read a different one."
    )
    assert verdicts[2].message.startswith("Stop repeating `read orders/tax.py`: no file has changed")
    assert "One more repeat ends the run." in verdicts[2].message
    assert verdicts[3].message == "Stopped: `read orders/tax.py` ran 4 times on unchanged files without progress."


def test_repeats_need_not_be_consecutive(tmp_path: Path) -> None:
    state = Workspace(make_repo(tmp_path)).state_hash()
    detector = LoopDetector()
    levels = [detector.observe(k, state).level for k in (RUN_TESTS, READ_TAX, key("list", path="."), RUN_TESTS)]
    assert levels == [NONE, NONE, NONE, HINT]


def test_a_file_change_resets_the_count(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    detector = LoopDetector()
    before = Workspace(repo).state_hash()
    assert detector.observe(READ_TAX, before).level == NONE
    assert detector.observe(READ_TAX, before).level == HINT
    (repo / "orders" / "tax.py").write_text("RATE = 0.25\n", encoding="utf-8")
    after = Workspace(repo).state_hash()
    assert after != before
    assert detector.observe(READ_TAX, after).level == NONE
    assert detector.observe(READ_TAX, after).level == HINT


def test_ping_pong_between_two_calls_is_caught(tmp_path: Path) -> None:
    state = Workspace(make_repo(tmp_path)).state_hash()
    read_test = key("read", path="tests/test_tax.py")
    detector = LoopDetector()
    verdicts = [detector.observe(k, state) for k in (READ_TAX, read_test) * 3]
    assert [v.level for v in verdicts] == [NONE, NONE, HINT, HINT, REDIRECT, HALT]
    assert [v.kind for v in verdicts[3:]] == ["pingpong"] * 3
    assert "back and forth between `read orders/tax.py` and `read tests/test_tax.py`" in verdicts[3].message
    assert verdicts[5].message == (
        "Stopped: alternated between `read orders/tax.py` and `read tests/test_tax.py` 6 times on unchanged files."
    )


def test_same_error_from_different_calls(tmp_path: Path) -> None:
    state = Workspace(make_repo(tmp_path)).state_hash()
    error = "edit on orders/tax.py: SEARCH text not found; read the file first"
    detector = LoopDetector()
    calls = [key("edit", path="orders/tax.py", search=f"RATE = {n}") for n in range(4)]
    verdicts = [detector.observe(c, state, error) for c in calls]
    assert [v.level for v in verdicts] == [NONE, HINT, REDIRECT, HALT]
    assert {v.kind for v in verdicts[1:]} == {"same_error"}
    assert f'"{error}"' in verdicts[1].message
    assert verdicts[3].message == f'Stopped: the same error came back 4 times in a row ("{error}").'


def test_a_different_error_or_a_success_breaks_the_error_run(tmp_path: Path) -> None:
    state = Workspace(make_repo(tmp_path)).state_hash()
    detector = LoopDetector()
    observed = [
        (key("edit", path="a.py", n=1), "not found"),
        (key("edit", path="a.py", n=2), "not found"),
        (key("read", path="a.py"), None),
        (key("edit", path="a.py", n=3), "not found"),
        (key("edit", path="a.py", n=4), "not found: line 4"),
    ]
    assert [detector.observe(k, state, e).level for k, e in observed] == [NONE, HINT, NONE, NONE, NONE]


def test_detector_is_deterministic(tmp_path: Path) -> None:
    state = Workspace(make_repo(tmp_path)).state_hash()
    script = [(READ_TAX, None), (RUN_TESTS, "boom"), (READ_TAX, None), (RUN_TESTS, "boom"), (READ_TAX, None)]
    runs = []
    for _ in range(2):
        detector = LoopDetector()
        runs.append([detector.observe(k, state, e) for k, e in script])
    assert runs[0] == runs[1]


def test_state_hash_tracks_contents_and_a_new_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path)
    first = Workspace(repo).state_hash()
    assert first == Workspace(repo).state_hash()
    (repo / "tests" / "test_tax.py").write_text("def test_rate():\n    assert False\n", encoding="utf-8")
    second = Workspace(repo).state_hash()
    assert second != first
    (repo / "empty.py").write_text("", encoding="utf-8")
    assert Workspace(repo).state_hash() != second


def test_call_labels() -> None:
    assert call_label(READ_TAX) == "read orders/tax.py"
    assert call_label(RUN_TESTS) == "run_tests"
    assert call_label(key("search", pattern="tax_rate", path="orders")) == 'search "tax_rate"'
    assert call_label(key("search", pattern="tax_rate")) == 'search "tax_rate"'
    assert (
        call_label(key("run_tests", tests="tests/test_tax.py::test_rate")) == 'run_tests "tests/test_tax.py::test_rate"'
    )
    assert call_label("not json") == "not json"
    assert len(call_label(key("read", path="x" * 200))) == 60
