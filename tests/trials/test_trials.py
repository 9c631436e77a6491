"""The search layer driven by the scripted model on real repos: candidates are checked in scratch copies, the
tests choose, a worse candidate is never kept, a repair prompt holds only the latest failure."""

import hashlib
import json
import subprocess
from pathlib import Path

from pyharness.evals.demo import make_repo
from pyharness.evals.runner import make_stdout_repo
from pyharness.evals.tasks import Case, StdoutTask, task_message
from pyharness.harness.pipeline import LAYERS, HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel

EVALS = Path(__file__).resolve().parents[2] / "evals"

SUM_TASK = StdoutTask(
    id="t_sum", prompt="Read integers, one per line, and print their sum.",
    example=Case("1\n2\n3\n", "6\n"), hidden=[Case("5\n", "5\n")])
WRONG_SUM = "```python\nimport sys\nprint(len(sys.stdin.read().split()))\n```"
WRONG_SUM_2 = "```python\nimport sys\nprint(max(int(x) for x in sys.stdin.read().split()))\n```"
RIGHT_SUM = "```python\nimport sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n```"

BULK_RIGHT = ("The comparison must include the threshold.\n```python\ndef bulk_discount(line: OrderLine) -> float:\n"
              '    """Bulk discount."""\n    if line.quantity >= BULK_THRESHOLD:\n'
              "        return round(line.total() * BULK_RATE, 2)\n    return 0.0\n```")
BULK_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
             "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")
"""The demo fix as one loop edit (for runs without the search layer)."""
NO_SEARCH = ",".join(name for name in LAYERS if name != "trials")
BULK_WORSE = ("```python\ndef bulk_discount(line: OrderLine) -> float:\n    return 1 / 0\n```")
BULK_SAME = ("```python\ndef bulk_discount(line: OrderLine) -> float:\n    if line.quantity > BULK_THRESHOLD + 0:\n"
             "        return round(line.total() * BULK_RATE, 2)\n    return 0.0\n```")


def tree_hash(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file() and ".git" not in p.parts and ".ph" not in p.parts
                       and "__pycache__" not in p.parts):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def run(repo: Path, mode: str, task: str, replies: list[str], *, layers: str | None = None,
        max_steps: int | None = None, schedule: str | None = None):
    """A scripted run; the step budget is the schedule's length unless given (the search alone, no loop after it)."""
    max_steps = max_steps or (len(schedule.split(",")) if schedule else 8)
    model = ScriptedModel(replies=replies)
    result = run_job(repo, mode, task, model, config=AgentConfig(max_steps=max_steps, schedule=schedule),
                     harness=HarnessConfig.parse_spec("on", layers), default_write_path="main.py")
    turns = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]
    return result, turns


def test_stdout_repair_gets_the_latest_failure_only_and_passes(tmp_path):
    repo = make_stdout_repo(tmp_path / "repo", SUM_TASK)
    result, turns = run(repo, "stdout", task_message(SUM_TASK), [WRONG_SUM, WRONG_SUM_2, RIGHT_SUM],
                        schedule="plain@0,repair@0,repair@0.7")
    assert result.outcome == "done", result.reason
    assert (repo / "main.py").read_text() == RIGHT_SUM.split("```python\n")[1].split("```")[0]
    assert [t["trial"]["origin"] for t in turns] == ["greedy", "repair 1", "repair 2"]
    assert result.trials["passed_by"] == "repair 2" and result.trials["run"] == 3
    assert result.first_pass == 3 and result.attempts == 3
    first = turns[0]["new_messages"][0]["content"]
    assert first.startswith(SUM_TASK.prompt) and "run_tests" not in first  # the plain request, no protocol
    third = turns[2]["new_messages"][0]["content"]
    # the repair shows the latest attempt's code and its one failure; the first attempt only as one line
    assert "print(max(" in third and "print(len(" not in third
    assert third.count("got:      '3\\n'") == 1 and "got:      '2\\n'" not in third  # the latest failure only
    assert "attempt 1: printed '3\\n' where '6\\n' was expected" in third  # older ones: one line each
    assert "attempt 2:" not in third
    assert result.interventions["trials.candidate"] == 3


def test_stdout_identical_candidates_run_once(tmp_path):
    repo = make_stdout_repo(tmp_path / "repo", SUM_TASK)
    result, turns = run(repo, "stdout", task_message(SUM_TASK), [WRONG_SUM, WRONG_SUM, RIGHT_SUM])
    assert result.outcome == "done"
    assert result.trials["candidates"] == 3 and result.trials["run"] == 2 and result.trials["duplicates"] == 1
    assert result.interventions["trials.duplicate"] == 1


def test_candidates_count_against_the_step_budget_and_the_best_is_kept(tmp_path):
    repo = make_stdout_repo(tmp_path / "repo", SUM_TASK)
    result, turns = run(repo, "stdout", task_message(SUM_TASK), [WRONG_SUM, WRONG_SUM_2, RIGHT_SUM], max_steps=2)
    assert result.outcome == "stopped" and "step budget of 2" in result.reason
    assert len(turns) == 2 and result.steps == 2
    assert (repo / "main.py").is_file()  # the best failing program is left for the user to see


def test_fix_candidate_rewrites_the_suspect_function_only(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    before = (repo / "orders/pricing.py").read_text()
    result, turns = run(repo, "fix", "", [BULK_RIGHT])
    assert result.outcome == "done", result.reason
    assert "1 failing test(s) now pass" in result.reason and "trials: greedy" in result.reason
    after = (repo / "orders/pricing.py").read_text()
    assert "if line.quantity >= BULK_THRESHOLD:" in after
    assert after.replace('"""Bulk discount."""', "") != before
    # everything outside bulk_discount is byte-identical
    assert after.split("def bulk_discount")[0] == before.split("def bulk_discount")[0]
    assert after.split("def apply_percentage_discount")[1] == before.split("def apply_percentage_discount")[1]
    prompt = turns[0]["new_messages"][0]["content"]
    assert "def bulk_discount" in prompt and "test_bulk_discount_applies" in prompt
    assert "BULK_THRESHOLD = 10" in prompt  # the constants it uses
    assert "saw line.quantity=10, BULK_THRESHOLD=10 -> False" in prompt  # the traced condition


def test_fix_worse_or_equal_candidates_never_touch_the_users_tree(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    before = tree_hash(repo)
    result, turns = run(repo, "fix", "", [BULK_WORSE, BULK_SAME, "no code at all"], max_steps=3)
    assert result.outcome == "stopped"
    assert tree_hash(repo) == before and outside.read_text() == "keep"
    assert [t["ok"] for t in turns] == [False, False, False]
    assert "ZeroDivisionError" in turns[0]["observation"]
    assert "no code block" in turns[2]["observation"]


def test_fix_keeps_a_better_candidate_after_a_worse_one(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    result, turns = run(repo, "fix", "", [BULK_WORSE, BULK_RIGHT], schedule="plain@0,repair@0.5")
    assert result.outcome == "done" and result.trials["passed_by"] == "repair 1"
    assert "1 / 0" not in (repo / "orders/pricing.py").read_text()
    # the repair prompt shows the tried version and its failure
    assert "1 / 0" in turns[1]["new_messages"][0]["content"]


def test_fix_runs_the_suite_only_for_a_candidate_that_passes_a_failing_test(tmp_path, demo_jobs, monkeypatch):
    from pyharness.trials import verdicts

    runs = []

    def recording(root, targets=None, **kwargs):
        if Path(root).name.startswith("ph-scratch-"):
            runs.append(list(targets or []))
        return real(root, targets, **kwargs)

    real = verdicts.run_pytest
    monkeypatch.setattr(verdicts, "run_pytest", recording)
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    result, turns = run(repo, "fix", "", [BULK_WORSE, BULK_SAME, BULK_RIGHT], schedule="plain@0,plain@0.5,repair@0.5")
    assert result.outcome == "done" and result.trials["passed_by"] == "repair 1"
    failing = ["tests/test_pricing.py::test_bulk_discount_applies"]
    # the code before: the suite; two candidates that fix nothing: the failing test only; the fix: both
    assert runs == [[], failing, failing, failing, []], runs
    assert "ZeroDivisionError" in turns[0]["observation"]  # the quick run's failure is what a repair is shown
    runs.clear()
    repo = make_repo(tmp_path / "orders2", demo_jobs["fix"])
    without = ",".join(name for name in LAYERS if name != "failfirst")
    result, turns = run(repo, "fix", "", [BULK_WORSE, BULK_RIGHT], schedule="plain@0,repair@0.5", layers=without)
    assert result.outcome == "done" and runs == [[], [], []], runs  # without the layer: the suite every time


def test_fix_with_named_tests_judges_by_those_tests_not_the_whole_suite(tmp_path):
    from pyharness.workspace.gitops import snapshot_repo

    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "calc.py").write_text("def double(x):\n    return x + x + 1\n")
    (repo / "tests" / "test_calc.py").write_text("from calc import double\n\n\ndef test_double():\n"
                                                 "    assert double(2) == 4\n")
    # a test the job did not name, broken before and after (a large project's slow or unrelated part)
    (repo / "tests" / "test_other.py").write_text("def test_elsewhere():\n    assert False\n")
    snapshot_repo(repo, "start")
    right = "```python\ndef double(x):\n    return x + x\n```"
    edit = ('Action: edit {"path": "calc.py"}\n<<<<<<< SEARCH\n    return x + x + 1\n=======\n'
            "    return x + x\n>>>>>>> REPLACE")
    for layers, reply in ((None, right), (NO_SEARCH, edit)):
        subprocess.run(["git", "checkout", "-q", "--", "."], cwd=repo, check=True)
        result = run_job(repo, "fix", "", ScriptedModel(replies=[reply]), tests=["tests/test_calc.py"],
                         config=AgentConfig(max_steps=2), harness=HarnessConfig.parse_spec("on", layers))
        assert result.outcome == "done", (layers, result.reason)
        assert "1 failing test(s) now pass; 1 passed" in result.reason


def test_fix_merges_a_method_back_into_its_class(tmp_path):
    folder = EVALS / "jobs" / "j04_books_fix"
    job = json.loads((folder / "job.json").read_text())
    repo = make_repo(tmp_path / "books", job, root=folder, source=folder / "repo")
    reply = ("```python\ndef find_by_author(self, author: str) -> list[Book]:\n    wanted = author.strip().lower()\n"
             "    found = [b for b in self._books.values() if b.author.lower() == wanted]\n"
             "    return sorted(found, key=lambda book: book.year)\n```")
    result, turns = run(repo, "fix", "", [reply])
    assert result.outcome == "done", result.reason
    text = (repo / "library/catalog.py").read_text()
    assert "        found = [b for b in self._books.values() if b.author.lower() == wanted]\n" in text
    assert "def published_between" in text


def test_without_the_search_layer_the_loop_runs_as_before(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    result, turns = run(repo, "fix", "", [BULK_EDIT], layers=NO_SEARCH)
    assert result.outcome == "done" and result.trials == {}
    assert turns[0]["action"]["name"] == "edit" and "trial" not in turns[0]
    assert "trials.candidate" not in result.interventions


def test_function_task_examples_from_its_text_choose(tmp_path):
    prompt = ('def double(x):\n    """Twice x.\n    >>> double(2)\n    4\n    double(5) == 10\n    """\n')
    task = StdoutTask(id="t_double", prompt=prompt, entry_point="double",
                      example=Case("", "4\n", "\nprint(repr(double(2)))\n"),
                      hidden=[Case("", "4\n10\n", "\nprint(repr(double(2)))\nprint(repr(double(5)))\n")])
    repo = make_stdout_repo(tmp_path / "repo", task)
    stub = '```python\ndef double(x):\n    """Twice x."""\n```'
    squares = "```python\ndef double(x):\n    return x * x\n\nprint(double(3))\n```"  # passes the example only
    right = "```python\ndef double(x):\n    return x + x\n```"
    result, turns = run(repo, "stdout", task_message(task), [stub, squares, right])
    assert result.outcome == "done", result.reason
    assert "has no body" in turns[0]["observation"]
    assert "double(5) returned 25, expected 10" in turns[1]["observation"]
    assert (repo / "main.py").read_text() == "def double(x):\n    return x + x\n"
    assert turns[0]["new_messages"][0]["content"].startswith("Complete the following Python function.")


def test_examples_are_read_from_doctests_and_prose_with_literal_arguments_only():
    from pyharness.trials.taskchecks import read_checks, run_checks

    text = '''def f(s, c):
    """
    >>> f("ab", "a")
    'b'
    >>> f("x", "y") == 'x'
    f('abc', 'b') ==> 'ac'
    f("q", "q") => true
    f(a) == 'a'
    For s = "abcde", c = "ae", the result should be ('bcd',False)
    """
'''
    checks = read_checks(text, ["f"])
    assert [(c.call, c.expected) for c in checks] == [
        ("f('ab', 'a')", "'b'"), ("f('x', 'y')", "'x'"), ("f('abc', 'b')", "'ac'"), ("f('q', 'q')", "True"),
        ("f(s='abcde', c='ae')", "('bcd',False)")]  # f(a): `a` is not a literal, so it is no check
    right = "def f(s, c):\n    return ''.join(ch for ch in s if ch not in c)\n"
    assert run_checks(right, checks[:3]).failure == ""
    wrong = "def f(s, c):\n    return s\n"
    result = run_checks(wrong, checks[:3])
    assert result.passed == 1 and result.total == 3 and result.failure == "f('ab', 'a') returned 'ab', expected 'b'"
    inputs = read_checks("def g(xs):\n    '''\n    Input: [4,2,3]\n    Output: [2, 1]\n    '''\n", ["g"])
    assert [(c.call, c.expected) for c in inputs] == [("g([4, 2, 3])", "[2, 1]")]


SHIP_WRONG = ("```python\ndef shipping_cost(weight_kg: float) -> float:\n"
              "    return round(5.0 + 1.5 * weight_kg, 2)\n```")
SHIP_RIGHT = ("```python\ndef shipping_cost(weight_kg: float) -> float:\n"
              "    return round(5.0 + 1.5 * max(0.0, weight_kg - 2), 2)\n```")


def test_add_the_task_examples_become_the_test_and_choose_the_file(tmp_path, demo_jobs):
    job = demo_jobs["add"]
    repo = make_repo(tmp_path / "orders", job)
    result, turns = run(repo, "add", job["task"], [SHIP_WRONG, SHIP_RIGHT], schedule="plain@0,repair@0.5")
    assert result.outcome == "done", result.reason
    assert "new test tests/test_shipping.py fails on the old code and passes now" in result.reason
    test = (repo / "tests/test_shipping.py").read_text()
    assert "from orders.shipping import shipping_cost" in test
    assert "assert shipping_cost(3.5) == 7.25" in test and test.count("def test_example_") == 4
    assert "max(0.0, weight_kg - 2)" in (repo / "orders/shipping.py").read_text()
    assert "test_example_1 fails" in turns[0]["observation"]
    assert turns[1]["trial"]["origin"] == "repair 1"


def test_add_without_readable_examples_the_model_writes_the_test_first(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["ask"])
    task = 'Create a new file orders/greet.py with a function `greet(name: str) -> str` returning "Hello, NAME!".'
    test = ("```python\nfrom orders.greet import greet\n\n\ndef test_greet():\n"
            "    assert greet('Ann') == 'Hello, Ann!'\n```")
    impl = "```python\ndef greet(name: str) -> str:\n    return f'Hello, {name}!'\n```"
    result, turns = run(repo, "add", task, [test, impl])
    assert result.outcome == "done", result.reason
    assert [t["trial"]["origin"] for t in turns] == ["test", "greedy"]
    assert (repo / "tests/test_greet.py").read_text().startswith("from orders.greet import greet")


def test_add_a_task_naming_no_new_file_goes_to_the_loop(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["ask"])
    result, turns = run(repo, "add", "make totals nicer", ["Action: done {}"], max_steps=1)
    assert result.trials == {} and turns[0]["action"]["name"] == "done"


def test_a_docstring_only_function_is_refused_in_a_write(orders, drive):
    repo = orders("run")
    stub = 'Action: write {"path": "orders/extra.py"}\n```python\ndef extra(x):\n    """Twice x."""\n```'
    real = stub.replace('"""\n```', '"""\n    return 2 * x\n```')
    result, records = drive(repo, "run", "add extra()", [stub, real, 'Action: done {"summary": "added"}'])
    turns = [r for r in records if r["event"] == "turn"]
    assert "extra has no body, only a docstring" in turns[0]["observation"]
    assert (repo / "orders/extra.py").read_text().endswith("return 2 * x\n")


def test_examples_in_a_fix_prompt_name_the_repos_own_file(orders, drive):
    repo = orders("fix")
    result, records = drive(repo, "fix", "", ["I think the threshold is wrong."], max_steps=1)
    start = records[0]
    assert "shop/cart.py" not in start["system"] and '"orders/pricing.py"' in start["system"]
    turns = [r for r in records if r["event"] == "turn"]
    assert "shop/" not in turns[0]["observation"]


def test_a_malformed_schedule_is_a_one_line_error(tmp_path):
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "pyharness.cli", "fix", "--repo", str(tmp_path),
                           "--schedule", "plain@0,guess@1"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    assert proc.stderr.strip() == "ph: --schedule: unknown framing 'guess' in the schedule " \
                                  "(plain, plan, repair, line, spec, guesses, vote, confirm, cloze)"


def test_add_a_model_test_that_defines_the_function_itself_is_adopted(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["ask"])
    task = 'Create a new file orders/greet.py with a function `greet(name: str) -> str` returning "Hello, NAME!".'
    test = ("```python\nimport pytest\n\ndef greet(name):\n    return 'Hello, ' + name + '!'\n\n\ndef test_greet():\n"
            "    assert greet('Ann') == 'Hello, Ann!'\n```")
    impl = "```python\ndef greet(name: str) -> str:\n    return f'Hello, {name}!'\n```"
    result, turns = run(repo, "add", task, [test, impl])
    assert result.outcome == "done", result.reason
    written = (repo / "tests/test_greet.py").read_text()
    assert written.startswith("from orders.greet import greet\nimport pytest\n") and "def greet" not in written


def test_add_without_a_usable_test_the_loop_goes_on(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["ask"])
    task = 'Create a new file orders/greet.py with a function `greet(name: str) -> str` returning "Hello, NAME!".'
    result, turns = run(repo, "add", task, ["I would write a test.", 'Action: read {"path": "orders/lines.py"}'],
                        max_steps=2)
    assert result.interventions["trials.declined"] == 1
    assert [t["action"]["name"] for t in turns] == ["test", "read"]


def test_fix_a_line_named_in_words_becomes_the_candidate(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    said = "Change `if line.quantity > BULK_THRESHOLD:` to `if line.quantity >= BULK_THRESHOLD:` and it works."
    result, turns = run(repo, "fix", "", [said], schedule="line@0")
    assert result.outcome == "done" and result.trials["passed_by"] == "greedy", result.reason
    assert "    if line.quantity >= BULK_THRESHOLD:\n" in (repo / "orders/pricing.py").read_text()
    assert "Which line is wrong?" in turns[0]["new_messages"][0]["content"]
    assert "def test_bulk_discount_applies():" in turns[0]["new_messages"][0]["content"]  # the test's own source


def test_fix_a_reply_that_sends_the_code_back_unchanged_is_named_so(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    same = ("```python\ndef bulk_discount(line: OrderLine) -> float:\n"
            '    """Bulk discount for one line: BULK_RATE of the line total when the line has\n'
            '    at least BULK_THRESHOLD units, otherwise 0.0."""\n    if line.quantity > BULK_THRESHOLD:\n'
            "        return round(line.total() * BULK_RATE, 2)\n    return 0.0\n```")
    result, turns = run(repo, "fix", "", [same, BULK_RIGHT], schedule="plain@0,repair@0.5")
    assert turns[0]["observation"].startswith("greedy: unchanged: the reply sends back the code as it is")
    assert result.outcome == "done" and result.trials["run"] == 2


def test_fix_spec_framing_hides_the_buggy_body_and_its_rewrite_is_merged(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    result, turns = run(repo, "fix", "", [BULK_RIGHT], schedule="spec@0")
    asked = turns[0]["new_messages"][0]["content"]
    assert "if line.quantity > BULK_THRESHOLD:\n        return round" not in asked  # the body is not shown
    assert "def bulk_discount(line: OrderLine) -> float:" in asked and "\n    ...\n```" in asked
    assert "BULK_THRESHOLD" in asked and "Write the complete function(s) anew" in asked
    assert result.outcome == "done" and result.trials["passed_by"] == "greedy", result.reason
    assert "    if line.quantity >= BULK_THRESHOLD:\n" in (repo / "orders/pricing.py").read_text()


def test_eval_schedule_presets_are_an_axis():
    from pyharness.evals.configs import parse_configs
    from pyharness.trials.schedule import PRESETS

    configs = parse_configs(["harness=on schedule=default,spec"])
    assert [c.name for c in configs] == ["harness=on schedule=default", "harness=on schedule=spec"]
    assert "spec@" in PRESETS["spec"]["fix"] and PRESETS["default"] == {}
    from pyharness.trials.candidates import parse_schedule
    from pyharness.trials.schedule import FIX_SCHEDULE

    longer = parse_schedule(PRESETS["long"]["fix"])
    assert len(longer) == 16 and longer[:8] == parse_schedule(FIX_SCHEDULE)


def test_fix_guesses_are_checked_one_by_one_and_the_first_that_passes_is_kept(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    said = ("1. change `return round(line.total() * BULK_RATE, 2)` to `return round(line.total() * BULK_RATE, 3)`\n"
            "2. change `if line.quantity > BULK_THRESHOLD:` to `if line.quantity >= BULK_THRESHOLD:`\n"
            "3. change `return 0.0` to `return 0`\n")
    result, turns = run(repo, "fix", "", [said], schedule="guesses@0")
    assert "Give three different guesses" in turns[0]["new_messages"][0]["content"]
    assert result.outcome == "done" and result.trials["passed_by"] == "greedy.2", result.reason
    assert result.trials["run"] == 2 and result.steps == 1  # two guesses checked, one model turn; the third not run
    assert turns[0]["observation"].startswith("greedy: ") and "0.0 = bulk_discount(" in turns[0]["observation"]
    assert turns[0]["observation"].endswith("\ngreedy.2: all checks pass")
    assert "    if line.quantity >= BULK_THRESHOLD:\n" in (repo / "orders/pricing.py").read_text()


def test_fix_guesses_that_change_nothing_known_are_no_candidate(tmp_path, demo_jobs):
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    result, turns = run(repo, "fix", "", ["change `x = 1` to `x = 2`\nI am not sure."], schedule="guesses@0")
    assert result.outcome != "done" and result.trials["run"] == 0
    assert turns[0]["observation"] == "greedy: the reply held no code block"
    assert "if line.quantity > BULK_THRESHOLD:" in (repo / "orders/pricing.py").read_text()


def test_fix_guesses_read_two_line_items_a_fenced_line_alone_and_a_whole_function(tmp_path, demo_jobs):
    from pyharness.localise.linetrace import RunTrace
    from pyharness.trials.candidates import Framing
    from pyharness.trials.suspects import FixTarget
    from pyharness.workspace.tree import Workspace

    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    ws = Workspace(repo)
    target = FixTarget(ws, "tests/test_pricing.py::test_bulk_discount_applies", "assert 0.0 == 2.5",
                       "tests/test_pricing.py:17: in test_bulk_discount_applies\n"
                       "    assert bulk_discount(line) == 2.5\n",
                       RunTrace())
    assert [u.name for u in target.units] == ["bulk_discount"]
    items = ("1. **The wrong line**: `if line.quantity > BULK_THRESHOLD:`\n"
             "   **The corrected line**: `if line.quantity >= BULK_THRESHOLD:`\n\n"
             "2. The threshold check is fine; round to 1 place instead:\n```python\n"
             "        return round(line.total() * BULK_RATE, 1)\n```\n")
    found = target.extract_all(items, Framing("guesses", 0), ws)
    assert len(found) == 2
    assert "    if line.quantity >= BULK_THRESHOLD:\n" in found[0] and found[0].startswith("def bulk_discount(")
    assert "        return round(line.total() * BULK_RATE, 1)\n" in found[1]
    assert "if line.quantity > BULK_THRESHOLD:" in found[1]  # one change per guess
    whole = target.extract_all(BULK_RIGHT, Framing("guesses", 0), ws)
    assert len(whole) == 1 and "if line.quantity >= BULK_THRESHOLD:" in whole[0]
    assert target.extract_all("```python\nprint('unrelated')\n```", Framing("guesses", 0), ws) == []


def test_search_and_loop_turns_carry_the_same_reply_fields(tmp_path, demo_jobs):
    """`ph show` reads both kinds of turn: each holds the reply with its timing and token counts, and an action."""
    reply_fields = {"step", "new_messages", "reply", "finish_reason", "stopped_early", "seconds", "prompt_tokens",
                    "cached_tokens", "completion_tokens", "action", "interventions", "observation", "ok"}
    repo = make_stdout_repo(tmp_path / "repo", SUM_TASK)
    _, searched = run(repo, "stdout", task_message(SUM_TASK), [RIGHT_SUM], schedule="plain@0")
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    _, looped = run(repo, "fix", "", [BULK_EDIT], layers=NO_SEARCH)
    assert searched and looped
    for turn in searched + looped:
        assert reply_fields <= set(turn), reply_fields - set(turn)
    assert searched[0]["trial"]["origin"] == "greedy" and searched[0]["reply"] == RIGHT_SUM
    assert looped[0]["reply"] == BULK_EDIT and looped[0]["confidence"] >= 0 and "trial" not in looped[0]
    assert looped[0]["prompt_tokens"] > 0 and searched[0]["prompt_tokens"] > 0


def test_the_schedule_option_names_every_framing():
    from pyharness.cli.options import ScheduleOpt
    from pyharness.trials.candidates import KINDS

    said = ScheduleOpt.__metadata__[0].help
    assert [kind for kind in KINDS if kind not in said] == []
