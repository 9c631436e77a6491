"""confidence: scores per call, and --escalate-to sends a low-confidence turn to a second model."""

from pyharness.harness.call import ActionCall, Intervention
from pyharness.harness.confidence import THRESHOLD, Confidence
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel


def test_clean_call_scores_full_and_repairs_cost():
    conf = Confidence()
    assert conf.score(ActionCall("read", {"path": "a.py"})) == 1.0
    messy = ActionCall("read", {"path": "a.py"}, [Intervention("repair.json"), Intervention("repair.alias"),
                                                  Intervention("repair.rename_key"), Intervention("parse.bare_json")])
    assert conf.score(messy) < 0.7
    assert conf.score(ActionCall("read", {"path": "a.py"}), truncated=True, format_errors=3) < THRESHOLD


def test_history_of_failures_lowers_the_score():
    conf = Confidence()
    for _ in range(3):
        conf.record("edit", ok=False)
    assert conf.score(ActionCall("edit", {"path": "a.py"})) == 0.7
    assert conf.score(ActionCall("read", {"path": "a.py"})) == 1.0


def test_low_confidence_turn_is_escalated_and_recorded(orders):
    repo = orders("ask")
    weak = ScriptedModel(replies=["I would maybe look at some file", 'Action: answer {"text": "orders/tax.py:9 0.05"}'])
    strong = ScriptedModel(replies=['Action: read {"path": "orders/tax.py"}'])
    result = run_job(repo, "ask", "Which file defines the books rate?", weak, escalate=strong,
                     config=AgentConfig(max_steps=4))
    records = read_transcript(__import__("pathlib").Path(result.transcript))
    turns = [r for r in records if r["event"] == "turn"]
    assert turns[0]["action"] == {"name": "read", "args": {"path": "orders/tax.py"}}
    assert {"kind": "confidence.escalate", "detail": "0.00 -> scripted"} in turns[0]["interventions"]
    assert turns[0]["reply"] == 'Action: read {"path": "orders/tax.py"}'
    assert result.outcome == "done" and result.interventions["confidence.escalate"] == 1
    assert turns[1]["confidence"] == 1.0
