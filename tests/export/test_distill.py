"""`ph distill` with two scripted models on the jobs suite (real eval runs: real repos, real pytest, the real CLI): the
teacher is asked twice at each loop step that holds harness additions, and exactly the steps where its two actions
differ and the record does not contradict the with-harness one become examples. `bare` is checked on a real prompt."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pyharness.export.distill import bare
from pyharness.export.runlog import read_runs

READ_PRICING = 'Action: read {"path": "orders/pricing.py"}'
COMMENT_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n'
                "BULK_RATE = 0.10  # bulk discount: 10% off the line total\n=======\n"
                "BULK_RATE = 0.10  # bulk discount, 10% off the line total\n>>>>>>> REPLACE")
"""A change that leaves the bug: the tests run after it and still fail."""
BAD_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > 99:\n=======\n'
            "    if line.quantity >= 99:\n>>>>>>> REPLACE")
"""Its SEARCH text is not in the file: the harness refuses it."""
FIX_EDIT = ('Thought: the threshold should include 10\nAction: edit {"path": "orders/pricing.py"}\n'
            "<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n=======\n"
            "    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")
TEST_EDIT = ('Action: edit {"path": "tests/test_pricing.py"}\n<<<<<<< SEARCH\nfrom orders.pricing import\n=======\n'
             "from orders.pricing import  \n>>>>>>> REPLACE")
BULK_WORSE = "```python\ndef bulk_discount(line: OrderLine) -> float:\n    return 1 / 0\n```"


@pytest.fixture(autouse=True)
def _offline_datasets(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def test_bare_takes_out_exactly_the_harness_additions_of_a_real_fix_prompt(orders, drive):
    repo = orders("fix")
    result, _ = drive(repo, "fix", "", [READ_PRICING, READ_PRICING, COMMENT_EDIT, FIX_EDIT])
    assert result.outcome == "done", result.reason
    (run,), _ = read_runs([Path(result.transcript)])
    prompt = [s for s in run.steps if s.kind == "loop"][-1].prompt
    plain = bare(prompt)
    first, hinted, tested = prompt[1]["content"], prompt[5]["content"], prompt[7]["content"]
    assert "is defined in orders/pricing.py" in first and "\nHint: " in hinted and "Tests after this change:" in tested
    failing = re.search(r"First failing test: \S+", first).group(0)
    assert first.split(failing)[1].strip() and not first.split(failing)[1].startswith("\n\nRepository files:")
    # what stays: the roles, the system prompt, the replies, the task's first lines, the counts, the repo map
    assert [m["role"] for m in plain] == [m["role"] for m in prompt]
    assert [m for m in plain if m["role"] != "user"] == [m for m in prompt if m["role"] != "user"]
    assert plain[1]["content"].startswith("The tests fail. Fix the code") and "Tests failed: " in plain[1]["content"]
    # the traceback after the failing test's name, and the listing of the code it ran with its traced values, go
    assert failing + "\n\nRepository files:\n" in plain[1]["content"] and "is defined in" not in plain[1]["content"]
    assert plain[5]["content"] == hinted.split("\n\nHint: ")[0]
    assert plain[7]["content"] == tested.split("\nTests after this change:")[0]
    assert plain[7]["content"].startswith("Observation: Edited orders/pricing.py")
    assert bare(plain) == plain  # nothing is left to take out


def test_distill_keeps_exactly_the_steps_where_the_teacher_acts_differently_and_the_record_agrees(tmp_path):
    student = tmp_path / "student"
    student.mkdir()
    (student / "demo_ask.json").write_text(json.dumps([
        'Action: read {"path": "orders/tax.py"}',
        'Action: answer {"text": "orders/tax.py:9 sets the books rate to 0.05"}']))
    (student / "demo_fix.json").write_text(json.dumps([BULK_WORSE, READ_PRICING, BAD_EDIT, COMMENT_EDIT, FIX_EDIT]))
    teacher = tmp_path / "teacher.json"
    # asked with the harness's additions, then without them, at each fix step (the ask steps have none to take out)
    teacher.write_text(json.dumps([
        READ_PRICING, READ_PRICING,  # the same action either way: left out
        BAD_EDIT, "Action: run_tests {}",  # differs, but is the very call the harness refused: left out
        TEST_EDIT, "Action: run_tests {}",  # differs, but changes a test file in fix mode: left out
        FIX_EDIT, 'Action: read {"path": "orders/tax.py"}',  # differs, and the record agrees: kept
    ]))
    out = tmp_path / "distilled"
    proc = subprocess.run(
        [sys.executable, "-m", "pyharness.cli", "distill", "jobs", "--tasks", "demo_ask,demo_fix", "--model",
         f"scripted:{student}", "--teacher", f"scripted:{teacher}", "--schedule", "plain@0", "--out", str(out)],
        cwd=tmp_path, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert "1 of 6 loop step(s) kept from 2 run(s); 8 teacher call(s); 1 trial request(s) not asked" in proc.stdout
    summary = json.loads((out / "distill.json").read_text())
    assert summary == {"runs": 2, "steps_seen": 6, "kept": 1, "teacher_calls": 8, "trial_requests_not_asked": 1,
                       "dropped": {"no harness additions in the prompt": 2, "same action with and without them": 1,
                                   "contradicted: the harness refused this call": 1,
                                   "contradicted: changes a test file": 1}}
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["task"], r["outcome"]) for r in results] == [("demo_ask", "done"), ("demo_fix", "done")]

    datasets = pytest.importorskip("datasets", reason="pip install datasets (the dev extra) for the format tests")
    rows = datasets.load_dataset("json", data_files=str(out / "sft.jsonl"), split="train",
                                 cache_dir=str(tmp_path / "hf-cache"))
    assert len(rows) == 1
    (row,) = rows
    messages = row["messages"]
    assert messages[-1] == {"role": "assistant", "content": FIX_EDIT.split("\n", 1)[1]}  # the teacher's call, canonical
    assert [m["role"] for m in messages[:2]] == ["system", "user"] and messages[-2]["role"] == "user"
    # the prompt is the one the student had, the harness's additions in it
    assert "(The harness tried 1 candidate(s)" in messages[1]["content"]
    assert "Tests after this change:" in messages[-2]["content"]
    assert [m["content"] for m in messages if m["role"] == "assistant"][:-1] == [READ_PRICING, BAD_EDIT, COMMENT_EDIT]
    fix_run = read_runs([out / results[1]["transcript"]])[0][0]
    assert row["source"]["run"] == fix_run.run_id and row["source"]["step"] == 5
    assert row["source"]["kind"] == "distill" and row["source"]["teacher"] == f"scripted:{teacher}"


def test_distill_will_not_write_over_an_earlier_run(tmp_path):
    out = tmp_path / "distilled"
    out.mkdir()
    (out / "results.jsonl").write_text("")
    proc = subprocess.run([sys.executable, "-m", "pyharness.cli", "distill", "jobs", "--model", "scripted:x.json",
                           "--teacher", "scripted:y.json", "--out", str(out)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"ph: {out} holds an earlier run: give another --out (a distill run does not resume)"
