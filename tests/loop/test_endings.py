"""How a run ends: each ending is its typed outcome with its reason, in the result and in the transcript's one end
record (pyharness/runstate.py), never a message parsed back."""

import subprocess
from pathlib import Path

from runkit import LOOP_LAYERS

from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.runs import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.runstate import Outcome
from pyharness.workspace import sandbox

FIX_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
            "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")


def ends(result) -> list[dict]:
    return [r for r in read_transcript(Path(result.transcript)) if r["event"] == "end"]


def test_fix_on_a_green_suite_is_done_with_nothing_to_fix_and_asks_no_model(orders, drive):
    result, records = drive(orders("ask"), "fix", "", [])
    assert result.outcome is Outcome.DONE and result.reason.startswith("nothing to fix: ")
    assert [r["event"] for r in records] == ["start", "end"] and records[-1]["outcome"] == "done"


def test_fix_whose_tests_cannot_run_stops_saying_so(orders, drive):
    repo = orders("ask")
    (repo / "conftest.py").write_text("raise RuntimeError('broken conftest')\n", encoding="utf-8")
    result, records = drive(repo, "fix", "", [])
    assert result.outcome is Outcome.STOPPED and result.reason.startswith("the tests could not run: ")
    assert "broken conftest" in result.reason and records[-1]["outcome"] == "stopped"


def test_the_step_budget_ends_the_run_once_with_its_reason(orders, drive):
    result, records = drive(orders("run"), "run", "change nothing", ['Action: list {"path": "."}'] * 3,
                            max_steps=2)
    assert result.outcome is Outcome.STOPPED and result.reason == "step budget of 2 used up"
    assert result.steps == 2 and len([r for r in records if r["event"] == "turn"]) == 2
    assert [r["reason"] for r in records if r["event"] == "end"] == ["step budget of 2 used up"]


def test_a_run_that_touches_its_judge_is_invalid_in_its_one_end_record(orders):
    """Without the sandbox, code the tests run rewrites conftest.py: the run is invalid, the transcript says why just
    before its one end record, and the view is told the end once."""
    repo = orders("fix")
    pricing = repo / "orders" / "pricing.py"
    pricing.write_text("import pathlib\npathlib.Path(__file__).parents[1].joinpath('conftest.py')"
                       ".write_text('# changed by the code under test\\n')\n" + pricing.read_text(), encoding="utf-8")
    subprocess.run(["git", "commit", "-qam", "code that writes conftest.py"], cwd=repo, check=True)
    told: list[str] = []
    with sandbox.override(False):
        result = run_job(repo, "fix", "", ScriptedModel(replies=[FIX_EDIT]), config=AgentConfig(max_steps=2),
                         harness=HarnessConfig.parse_spec("on", LOOP_LAYERS),
                         emit=lambda kind, **data: told.append(kind))
    assert result.outcome is Outcome.INVALID and "conftest.py" in result.invalid
    assert result.reason.startswith("run invalid: ") and "conftest.py" in result.reason
    records = read_transcript(Path(result.transcript))
    assert [r["event"] for r in records][-2:] == ["invalid", "end"]
    assert [r["outcome"] for r in ends(result)] == ["invalid"] and told.count("end") == 1
