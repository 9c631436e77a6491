"""Choosing among candidates that all pass the visible checks by their agreement on probe inputs."""

from pyharness.evals.runner import make_stdout_repo
from pyharness.evals.tasks import Case, StdoutTask, task_message
from pyharness.trials.agree import behaviour, choose, probe_calls, seed_calls
from pyharness.trials.taskchecks import CallCheck
from tests.trials.test_trials import run


def test_seed_calls_are_the_checks_and_the_example_drivers_call():
    checks = [CallCheck("f(2, 'ab')", "3")]
    task = "for example\nprint(repr(f(5, 'x')))\nmust print exactly:\n6\n"
    assert seed_calls(task, checks) == ["f(2, 'ab')", "f(5, 'x')"]


def test_probes_change_one_literal_argument_a_little_and_leave_the_seeds_out():
    probes = probe_calls(["f(2, 'ab')", "g([1, 2])"], limit=100)
    assert "f(3, 'ab')" in probes and "f(0, 'ab')" in probes and "f(-2, 'ab')" in probes
    assert "f(2, 'ba')" in probes and "f(2, '')" in probes and "f(2, 'AB')" in probes
    assert "g([2, 1])" in probes and "g([])" in probes and "g([1, 2, 1])" in probes
    assert "f(2, 'ab')" not in probes and "g([1, 2])" not in probes
    assert probe_calls(["f(x)", "not a call(", "f(True)"]) == ["f(False)"]  # names and broken text give nothing
    assert len(probe_calls(["f(1, 2, 3, 'abc', [1, 2, 3])"], limit=7)) == 7


def test_behaviour_is_each_calls_repr_or_what_it_raised():
    code = "def f(x):\n    return 10 // x\n"
    assert behaviour(code, ["f(2)", "f(0)", "f('a')"]) == ("5", "raised ZeroDivisionError", "raised TypeError")
    assert behaviour("raise SystemExit(3)\n", ["f(1)"]) == ("main.py raised SystemExit",)
    assert behaviour("def f(x):\n    while True:\n        pass\n", ["f(1)"], timeout=1) is None


def test_the_candidate_most_others_agree_with_is_chosen_ties_keep_the_earliest():
    odd = "def f(x):\n    return x % 2 == 1\n"
    odd2 = "def f(x):\n    return bool(x & 1)\n"
    wrong = "def f(x):\n    return x == 3\n"
    calls = ["f(1)", "f(2)", "f(5)", "f(-3)"]
    assert choose([wrong, odd, odd2], calls) == (1, 2)
    assert choose([odd, wrong], calls) == (0, 1)
    assert choose([odd], calls) == (0, 1)
    assert choose(["def f(x):\n    while True: pass\n", odd], calls) == (1, 1)  # one that hangs agrees with none


def test_search_votes_among_passing_candidates_after_the_first_pass(tmp_path):
    prompt = 'def is_odd(n):\n    """True when n is odd.\n    >>> is_odd(3)\n    True\n    """\n'
    task = StdoutTask(id="t_odd", prompt=prompt, entry_point="is_odd",
                      example=Case("", "True\n", "\nprint(repr(is_odd(3)))\n"),
                      hidden=[Case("", "False\nTrue\n", "\nprint(repr(is_odd(4)))\nprint(repr(is_odd(7)))\n")])
    repo = make_stdout_repo(tmp_path / "repo", task)
    three = "```python\ndef is_odd(n):\n    return n == 3\n```"  # passes every visible check
    right = "```python\ndef is_odd(n):\n    return n % 2 == 1\n```"
    right2 = "```python\ndef is_odd(n):\n    return n % 2 != 0\n```"
    result, turns = run(repo, "stdout", task_message(task), [three, right, right2],
                        schedule="plain@0,plain@0.8,vote@0.8,vote@1.0")
    assert result.outcome == "done", result.reason
    assert result.trials["vote"] == {"passing": 3, "probes": 5, "support": 2, "chosen": "sample 1"}
    assert result.trials["passed_by"] == "sample 1" and result.first_pass == 2
    assert (repo / "main.py").read_text() == "def is_odd(n):\n    return n % 2 == 1\n"
    assert [t["trial"]["framing"] for t in turns] == ["plain", "plain", "plain"]  # plain@0.8 is not asked after a pass


def test_without_a_vote_in_the_schedule_the_first_pass_ends_the_search(tmp_path):
    prompt = 'def is_odd(n):\n    """True when n is odd.\n    >>> is_odd(3)\n    True\n    """\n'
    task = StdoutTask(id="t_odd", prompt=prompt, entry_point="is_odd",
                      example=Case("", "True\n", "\nprint(repr(is_odd(3)))\n"), hidden=[])
    repo = make_stdout_repo(tmp_path / "repo", task)
    three = "```python\ndef is_odd(n):\n    return n == 3\n```"
    result, turns = run(repo, "stdout", task_message(task), [three, "never asked"], schedule="plain@0,plain@0.8")
    assert result.outcome == "done" and len(turns) == 1 and "vote" not in result.trials


def odd_task(tmp_path):
    prompt = 'def is_odd(n):\n    """True when n is odd.\n    >>> is_odd(3)\n    True\n    """\n'
    task = StdoutTask(id="t_odd", prompt=prompt, entry_point="is_odd",
                      example=Case("", "True\n", "\nprint(repr(is_odd(3)))\n"), hidden=[])
    return task, make_stdout_repo(tmp_path / "repo", task)


def test_confirm_ends_the_search_when_a_sample_behaves_like_the_first_pass(tmp_path):
    task, repo = odd_task(tmp_path)
    right = "```python\ndef is_odd(n):\n    return n % 2 == 1\n```"
    right2 = "```python\ndef is_odd(n):\n    return n % 2 != 0\n```"
    result, turns = run(repo, "stdout", task_message(task), [right, right2, "never asked"],
                        schedule="plain@0,plain@0.8,confirm@0.8,confirm@1.0")
    assert result.outcome == "done" and len(turns) == 2  # the first confirm agreed on every probe: no third ask
    assert result.trials["passed_by"] == "greedy" and result.first_pass == 1
    assert (repo / "main.py").read_text() == "def is_odd(n):\n    return n % 2 == 1\n"


def test_confirm_goes_on_when_samples_disagree_and_the_majority_is_kept(tmp_path):
    task, repo = odd_task(tmp_path)
    three = "```python\ndef is_odd(n):\n    return n == 3\n```"  # passes every visible check
    right = "```python\ndef is_odd(n):\n    return n % 2 == 1\n```"
    right2 = "```python\ndef is_odd(n):\n    return n % 2 != 0\n```"
    result, turns = run(repo, "stdout", task_message(task), [three, right, right2, "no code", "no code"],
                        schedule="plain@0,confirm@0.8,confirm@0.8,confirm@1.0,confirm@1.0")
    assert result.outcome == "done", result.reason
    assert len(turns) == 5  # once the passing ones disagree, every confirm in the schedule is asked
    assert result.trials["vote"]["chosen"] == "sample 1" and result.trials["vote"]["support"] == 2
    assert (repo / "main.py").read_text() == "def is_odd(n):\n    return n % 2 == 1\n"
