"""End to end: a scripted model makes each classic small-model mistake once, and the fix job still finishes."""

# Each reply below is a mistake small models make (tests/data/corpus.jsonl holds more of them), then the corrections.
REPLIES = [
    "I will look at the code first.",  # prose, no action
    'Action: read("orders/pricing.py")',  # call syntax
    "Action: cat {'file': 'orders/pricing.py',}",  # unknown name for read, a synonym key, Python-ish JSON
    "Action: <action>",  # the prompt's placeholder copied
    'Action: read {"path": "orders/pricing.py"}',  # the same read a third time, nothing changed: a loop
    'Action: done {"summary": "fixed"}',  # victory declared before any change
    'Action: edit {"path": "orders/pricing.py", "start": 17, "end": 17}',  # the edit's new lines are missing
    "```python\n    if line.quantity >= BULK_THRESHOLD:\n```",  # ... and come as a bare code block
]


def test_each_classic_mistake_once_and_the_job_still_finishes(orders, drive):
    repo = orders("fix")
    result, records = drive(repo, "fix", "", REPLIES)
    assert result.outcome == "done", result.reason
    turns = [r for r in records if r["event"] == "turn"]
    assert len(turns) == len(REPLIES)
    kinds = [{i["kind"] for i in t["interventions"]} for t in turns]
    assert turns[0]["action"] is None and turns[0]["observation"].startswith("Format error: no action found")
    assert "validate.format_error" in kinds[0]
    assert "parse.call_syntax" in kinds[1] and turns[1]["ok"]
    assert {"repair.alias", "repair.rename_key"} <= kinds[2] and turns[2]["action"]["name"] == "read"
    assert "loops.repeat" in kinds[2]  # the same read on unchanged files: first a hint ...
    assert turns[3]["action"] is None and "placeholder" in turns[3]["observation"]
    assert "loops.repeat" in kinds[4] and turns[4]["observation"].startswith("Stop repeating")  # ... then a redirect
    assert turns[5]["ok"] is False and "test_bulk_discount_applies" in turns[5]["observation"]
    assert turns[6]["action"] is None and "the new lines are missing" in turns[6]["observation"]
    assert "repair.pending_edit" in kinds[7] and turns[7]["action"]["name"] == "edit"
    assert "Accepted" in turns[7]["observation"]
    assert "if line.quantity >= BULK_THRESHOLD:\n" in (repo / "orders/pricing.py").read_text()


def test_the_same_mistakes_without_the_harness_do_not_finish(orders, drive):
    result, records = drive(orders("fix"), "fix", "", REPLIES, harness="off")
    assert result.outcome != "done"
    turns = [r for r in records if r["event"] == "turn"]
    assert all(not t["interventions"] for t in turns)
