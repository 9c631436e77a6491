"""The harness pipeline on a corpus of malformed replies (tests/data/corpus.jsonl).

Each case: `reply` in `mode`; `expect` is the first action ({"name", "args"}, exact) or {"error": substring of the
FormatError}; optional `fixes` (intervention kinds of the first action, in order), `n_calls`, `calls` (every
action, exact), `before` (a reply sent first to the same pipeline, e.g. a body-less write) and `strict` (whether
the `--harness off` baseline parses it to the same action, or must refuse it). `source` says where the shape
comes from: `recorded` (verbatim replies of the embedded model), `field-notes` (replies the team saw from small
models while building ph) or `synthetic`.
"""

import json
from pathlib import Path

import pytest

from pyharness.actions import CORE
from pyharness.errors import FormatError
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.loop.jobs import MODE_ACTIONS

CORPUS = Path(__file__).parents[1] / "data" / "corpus.jsonl"
CASES = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def pipeline(mode: str, config: HarnessConfig | None = None) -> Pipeline:
    return Pipeline(
        {n: CORE[n] for n in MODE_ACTIONS[mode]},
        config or HarnessConfig(),
        default_write_path="main.py" if mode == "stdout" else None,
    )


def run(case: dict, config: HarnessConfig | None = None):
    """(calls, None) or (None, error message), after the case's `before` reply if it has one."""
    p = pipeline(case["mode"], config)
    if "before" in case:
        with pytest.raises(FormatError):
            p.process_all(case["before"])
    try:
        return p.process_all(case["reply"]), None
    except FormatError as err:
        return None, str(err)


def summary(calls) -> list:
    return [(c.name, c.args, [(i.kind, i.detail) for i in c.interventions]) for c in calls]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_case(case):
    calls, error = run(case)
    expect = case["expect"]
    if "error" in expect:
        assert calls is None, f"expected an error, got {summary(calls)}"
        assert expect["error"] in error
        return
    assert error is None, error
    first = calls[0]
    assert (first.name, first.args) == (expect["name"], expect["args"])
    if "fixes" in case:
        assert [i.kind for i in first.interventions] == case["fixes"]
    if "n_calls" in case:
        assert len(calls) == case["n_calls"]
    if "calls" in case:
        assert [{"name": c.name, "args": c.args} for c in calls] == case["calls"]


@pytest.mark.parametrize("case", [c for c in CASES if "strict" in c], ids=[c["id"] for c in CASES if "strict" in c])
def test_corpus_case_against_the_strict_baseline(case):
    calls, error = run(case, HarnessConfig.off())
    if case["strict"]:
        assert error is None, error
        assert (calls[0].name, calls[0].args) == (case["expect"]["name"], case["expect"]["args"])
        assert calls[0].interventions == []
    else:
        assert calls is None, f"the baseline accepted {summary(calls)}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_corpus_case_is_deterministic(case):
    first, second = run(case), run(case)
    assert (first[1], second[1]) == (first[1], first[1])
    if first[0] is not None:
        assert summary(first[0]) == summary(second[0])


def test_corpus_size_sources_and_ids():
    ids = [c["id"] for c in CASES]
    assert len(ids) >= 70
    assert len(set(ids)) == len(ids)
    assert sum(c["source"] in ("recorded", "field-notes") for c in CASES) >= 10
    assert {c["source"] for c in CASES} <= {"recorded", "field-notes", "synthetic"}
    assert {c["mode"] for c in CASES} <= set(MODE_ACTIONS)
    assert any(c["strict"] for c in CASES if "strict" in c) and not all(c["strict"] for c in CASES if "strict" in c)


def test_recorded_cases_are_verbatim_replies_of_the_model():
    recorded = set()
    for path in (Path(__file__).parents[1] / "data" / "recorded").glob("*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("event") == "turn":
                recorded.add(record["reply"])
    in_files = [c for c in CASES if c["source"] == "recorded" and c["reply"] in recorded]
    assert len(in_files) >= 5


def test_a_bodyless_write_then_a_bare_code_block_is_that_write():
    p = pipeline("fix")
    with pytest.raises(FormatError, match="the file content is missing"):
        p.process('Action: write {"path": "orders/shipping.py"}')
    assert p.pending_write == {"path": "orders/shipping.py"}
    call = p.process("```python\ndef shipping_cost(kg):\n    return 5.0\n```")
    assert (call.name, call.args) == (
        "write",
        {"path": "orders/shipping.py", "content": "def shipping_cost(kg):\n    return 5.0\n"},
    )
    assert [i.kind for i in call.interventions] == ["repair.pending_write"]
    assert p.pending_write is None
    with pytest.raises(FormatError, match="no action found"):
        p.process("```python\nprint(1)\n```")


def test_a_pending_write_is_forgotten_after_any_valid_action():
    p = pipeline("fix")
    with pytest.raises(FormatError):
        p.process('Action: write {"path": "a.py"}')
    p.process('Action: read {"path": "a.py"}')
    with pytest.raises(FormatError, match="no action found"):
        p.process("```python\nprint(1)\n```")
