"""repair.prose_edit: an edit the model states in words becomes the edit it meant."""

from pyharness.actions import CORE
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.prose import prose_edit
from pyharness.loop.jobs import MODE_ACTIONS

SOURCES = {
    "orders/pricing.py": (
        "def bulk_discount(line):\n    if line.quantity > BULK_THRESHOLD:\n        return 1.0\n    return 0.0\n"
    ),
    "orders/lines.py": (
        "class OrderLine:\n    def check(self):\n        if self.quantity < 1:\n            raise ValueError\n"
    ),
}
# recorded from the embedded model on the demo's fix job (no Action line; the edit is in the prose)
RECORDED = (
    "Thought: The line `if line.quantity > BULK_THRESHOLD:` is wrong because it checks if the quantity is greater "
    "than the threshold, but the threshold is defined as 10 units. If the quantity is 10 or more, the function "
    "should return the bulk discount, but if it is less than 10, it should return 0.0. Edit: Change the line to "
    "`if line.quantity >= BULK_THRESHOLD:`"
)


def pipeline(sources=SOURCES, harness=None) -> Pipeline:
    pipe = Pipeline({n: CORE[n] for n in MODE_ACTIONS["fix"]}, harness or HarnessConfig())
    pipe.sources = lambda: sources
    return pipe


def test_quoted_line_then_its_corrected_version_is_the_edit():
    assert prose_edit(RECORDED, SOURCES) == ("orders/pricing.py", 2, "    if line.quantity >= BULK_THRESHOLD:")


def test_the_closing_colon_may_be_left_out_of_both_quotes():
    text = "Thought: `if self.quantity < 1` is wrong, it should be `if self.quantity <= 0`"
    assert prose_edit(text, SOURCES) == ("orders/lines.py", 3, "        if self.quantity <= 0:")


def test_unrelated_or_ambiguous_quotes_are_not_an_edit():
    assert prose_edit("Change `BULK_THRESHOLD` in `orders/pricing.py` to `12`", SOURCES) is None
    assert prose_edit("`return 0.0` should be `return 0.5`", {**SOURCES, "b.py": "    return 0.0\n"}) is None
    assert prose_edit("`if line.quantity > BULK_THRESHOLD:` is right; see `def total(self):`", SOURCES) is None
    assert prose_edit("no quotes at all: change > to >=", SOURCES) is None


def test_a_reply_with_no_action_becomes_a_line_edit():
    call = pipeline().process(RECORDED)
    assert (call.name, call.args) == (
        "edit",
        {"path": "orders/pricing.py", "start": 2, "end": 2, "body": "    if line.quantity >= BULK_THRESHOLD:\n"},
    )
    assert [i.kind for i in call.interventions] == ["repair.prose_edit"]


def test_a_body_less_line_edit_of_other_lines_takes_the_stated_change():
    # recorded: a right Thought, then an edit of the wrong line range with no new lines
    reply = (
        "Thought: The line `if line.quantity > BULK_THRESHOLD:` is wrong. The correct condition should be "
        '`if line.quantity >= BULK_THRESHOLD:`.\n\nAction: edit {"path": "orders/pricing.py", "start": 15, "end": 16}'
    )
    call = pipeline().process(reply)
    assert call.args["start"] == 2 and call.args["body"] == "    if line.quantity >= BULK_THRESHOLD:\n"


def test_with_repair_off_the_prose_is_not_an_action():
    import pytest

    from pyharness.errors import FormatError

    with pytest.raises(FormatError):
        pipeline(harness=HarnessConfig(layers={"parse", "validate"})).process(RECORDED)


def test_a_labelled_action_line_is_parsed():
    reply = (
        'Thought: line 24 is wrong.\n\nEdit: {"path": "orders/lines.py", "start": 3, "end": 3}\n```python\n'
        "        if self.quantity < 0:\n```"
    )
    call = pipeline(sources={}).process(reply)
    assert call.name == "edit" and call.args["start"] == 3
    assert call.args["body"] == "        if self.quantity < 0:\n"


def test_fix_job_ends_in_one_step_from_the_recorded_reply(orders, drive):
    result, records = drive(orders("fix"), "fix", "", [RECORDED])
    assert result.outcome == "done" and result.steps == 1
    turn = next(r for r in records if r["event"] == "turn")
    assert {
        "kind": "repair.prose_edit",
        "detail": "the reply said how to change orders/pricing.py:17; that became the edit",
    } in turn["interventions"]
    first = records[0]["first_message"]
    assert "(in the failing test: line.quantity=10, BULK_THRESHOLD=10 -> False)" in first
    assert "OrderLine is defined" not in first  # a class named only in the assertion's repr is not shown


def test_a_body_less_write_is_continued_by_prefill_in_the_same_step(tmp_path):
    from pathlib import Path

    from pyharness.evals.runner import make_stdout_repo
    from pyharness.evals.tasks import parse_task, task_message
    from pyharness.loop.session import run_job
    from pyharness.loop.transcript import read_transcript
    from pyharness.models.scripted import ScriptedModel

    task = parse_task(
        {"id": "up", "prompt": "Print the line in upper case.", "reference": "print(input().upper())\n",
         "example": {"stdin": "hi\n", "stdout": "HI\n"}, "hidden": [{"stdin": "a\n", "stdout": "A\n"}] * 3},
        Path("up.json"),
    )
    repo = make_stdout_repo(tmp_path / "repo", task)
    # recorded shape (s022, s026): an action line with no body, then a second plan line
    replies = ['write {"path": "main.py"}\nread {"path": "main.py"}\n', "print(input().upper())\n```"]
    model = ScriptedModel(replies=replies, prefill=True)
    from runkit import LOOP_LAYERS

    from pyharness.harness.pipeline import HarnessConfig

    result = run_job(repo, "stdout", task_message(task), model, default_write_path="main.py",
                     harness=HarnessConfig.parse_spec("on", LOOP_LAYERS))
    assert result.outcome == "done" and result.steps == 1, result.reason
    turn = next(r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn")
    assert turn["reply"] == 'Action: write {"path": "main.py"}\n```python\nprint(input().upper())\n```'
    assert "repair.prefill" in [i["kind"] for i in turn["interventions"]]
    assert (repo / "main.py").read_text() == "print(input().upper())\n"
