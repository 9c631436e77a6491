"""The parser on replies recorded from the embedded model (tests/data/recorded/*.jsonl, real `ph demo` runs)."""

from pathlib import Path

from pyharness.actions import CORE
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.loop.jobs import MODE_ACTIONS
from pyharness.models.scripted import load_replies

RECORDED = Path(__file__).parents[1] / "data" / "recorded"


def pipeline(mode: str) -> Pipeline:
    return Pipeline({n: CORE[n] for n in MODE_ACTIONS[mode]}, HarnessConfig())


def test_recorded_ask_replies_parse():
    first, second = load_replies(RECORDED / "demo-ask.jsonl")
    calls = pipeline("ask").process_all(first)
    assert [(c.name, c.args) for c in calls] == [("read", {"path": "orders/tax.py"}),
                                                 ("search", {"pattern": "TAX_RATES", "path": "."})]
    assert calls[0].interventions[0].kind == "parse.multiple"
    answer = pipeline("ask").process(second)
    assert answer.name == "answer"
    assert answer.args == {"text": "The tax rate for books is 0.05. It is defined in orders/tax.py:10.",
                           "path": "orders/tax.py", "line": 10}
    assert [i.kind for i in answer.interventions] == ["repair.coerce"]


def test_recorded_fix_plan_parses_into_four_actions_with_the_edit_intact():
    replies = load_replies(RECORDED / "demo-fix.jsonl")
    calls = pipeline("fix").process_all(replies[1])
    assert [c.name for c in calls] == ["read", "edit", "run_tests", "done"]
    body = calls[1].args["body"]
    assert "      if line.quantity > BULK_THRESHOLD:\n  =======\n      if line.quantity >= BULK_THRESHOLD:" in body


def test_recorded_fix_edit_applies_despite_the_copied_indent():
    from pyharness.actions.edit import Args, apply, blocks

    replies = load_replies(RECORDED / "demo-fix.jsonl")
    edit = pipeline("fix").process_all(replies[1])[1]
    source = (Path(__file__).parents[2] / "demo/orders/orders/pricing.py").read_text()
    buggy = source.replace("line.quantity >= BULK_THRESHOLD", "line.quantity > BULK_THRESHOLD")
    (search, replace), = blocks(Args(**edit.args))
    assert apply(buggy, search, replace, "orders/pricing.py") == source


def test_recorded_add_write_keeps_the_code_byte_for_byte():
    reply = load_replies(RECORDED / "demo-add.jsonl")[0]
    calls = pipeline("add").process_all(reply)
    assert [c.name for c in calls[:3]] == ["write", "write", "run_tests"]
    assert calls[0].args["path"] == "orders/shipping.py"
    code = reply.split("```python\n", 1)[1].split("```", 1)[0]
    assert calls[0].args["content"] == code
    assert calls[1].args["path"] == "tests/test_shipping.py"
    assert "class TestShipping(unittest.TestCase):" in calls[1].args["content"]
