"""Cloze repair: a suspect statement masked and filled by the model, never shown the masked text."""

from runkit import SHIPPING  # the seeded repo the ranking is tested on

from pyharness.localise.linetrace import trace_test
from pyharness.localise.spectrum import spectrum
from pyharness.models.scripted import ScriptedModel
from pyharness.trials.cloze import Fill, sample_hole, try_order
from pyharness.trials.holes import CONTEXT_BEFORE, WINDOW_ALIGN, Hole, holes, same_code
from pyharness.trials.prompts import MISSING
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace

TESTS = ("from shipping import shipping\n\n\ndef test_light():\n    assert shipping(2) == 5.0\n\n\n"
         "def test_heavy():\n    assert shipping(12) == 6.0\n\n\n"
         "def test_express():\n    assert shipping(2, express=True) == 10.0\n")


def repo_holes(tmp_path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "shipping.py").write_text(SHIPPING)
    (tmp_path / "tests" / "test_it.py").write_text(TESTS)
    first = run_pytest(tmp_path)
    trace = trace_test(tmp_path, first.failing[0])
    trace.scores = spectrum(tmp_path, ["tests/test_it.py"], first.failing)
    return holes(Workspace(tmp_path), trace, first.first_traceback)


def test_the_best_ranked_statement_is_the_first_hole_and_its_text_is_never_in_the_prompt(tmp_path):
    found = repo_holes(tmp_path)
    hole = found[0]
    assert (hole.path, hole.start, hole.end, hole.rank) == ("shipping.py", 7, 7, 1)
    assert hole.original == "        cost = cost * 3  # the bug: express doubles the cost\n"
    assert hole.prefix.endswith("    if express:\n        ")  # the indentation is given, the code is not
    assert hole.suffix == "    return round(cost, 2)\n"
    for h in found:
        assert h.original.strip() not in h.prefix + h.suffix
        assert h.original.strip() not in h.chat_message() and MISSING in h.chat_message()
    model = ScriptedModel(replies=[], infills=["cost = cost * 2", "cost = cost * 3  # again", "cost = cost * 2"])
    fills = sample_hole(model, hole, [0.0, 0.8, 0.8], seed=1)
    for prompt in model.infill_prompts:
        assert "cost * 3" not in prompt.prefix + prompt.suffix
        assert prompt.options.stop == ["\n", "\n    return round(cost, 2)"]  # its line end; the line below again
    assert fills[0].file is not None and "        cost = cost * 2\n" in fills[0].file
    assert fills[1].file is None  # the masked text sent back: dropped before any test runs
    assert [f.sample for f in try_order(fills)] == [1]  # and the third is the first again: run once


def test_without_fill_in_the_middle_the_hole_is_asked_in_chat(tmp_path):
    hole = repo_holes(tmp_path)[0]
    model = ScriptedModel(replies=["```python\ncost = cost * 2\n```"])
    fills = sample_hole(model, hole, [0.0], seed=1)
    assert not fills[0].native and fills[0].text == "cost = cost * 2"
    assert "        cost = cost * 2\n" in fills[0].file


def test_a_fill_stops_where_it_writes_the_code_below_the_hole_again():
    lines = ["def f(items):\n", "    total = sum(\n", "        items\n", "    )\n", "\n", "    return round(total)\n",
             "    )\n"]
    model = ScriptedModel(replies=[], infills=["total = sum(\n        x * 2 for x in items\n    )\n    return round(total)"
                                               "\n    print('past the hole')"])
    [fill] = sample_hole(model, Hole("f.py", 2, 4, 1, lines, "    "), [0.0], seed=1)
    assert fill.text == "total = sum(\n        x * 2 for x in items\n    )"  # cut before the echo, at no cost
    assert model.infill_prompts[0].options.stop == ["\n\n", "\n    return round(total)"]
    short = Hole("f.py", 6, 6, 1, lines, "    ")  # the line below is `)`: too short to tell from the fill's own
    assert short.stops == ["\n"]


def test_a_fill_that_spans_lines_is_cut_where_the_file_parses():
    lines = ["def f(items):\n", "    total = sum(\n", "        items\n", "    )\n", "    return total\n"]
    hole = Hole("f.py", 2, 4, 1, lines, "    ")
    text = hole.filled("total = sum(\n        x * 2 for x in items\n    )\n    return 0\n    junk(")
    assert text == "def f(items):\n    total = sum(\n        x * 2 for x in items\n    )\n    return total\n"
    assert hole.filled("total = sum(") is None  # never parses
    assert hole.filled("total = sum(\n        items\n    )") is None  # the masked text again


def test_holes_near_each_other_share_the_start_of_their_window():
    lines = [f"    x{n} = {n}\n" for n in range(1, 301)]
    near, nearer = Hole("f.py", 150, 150, 1, lines, "    "), Hole("f.py", 141, 141, 2, lines, "    ")
    for hole in (near, nearer):
        shown = hole.prefix.count("\n")
        assert CONTEXT_BEFORE <= shown < CONTEXT_BEFORE + WINDOW_ALIGN
        assert (hole.start - 1 - shown) % WINDOW_ALIGN == 0  # the window starts on an aligned line
    # the later prompt begins with everything the earlier one showed above its hole: only the rest is read again
    assert near.prefix.startswith(nearer.prefix.rstrip(" "))
    assert "x141 = " not in nearer.prefix and Hole("f.py", 5, 5, 1, lines, "    ").prefix.startswith("    x1 = 1\n")


def test_likelier_fills_are_tried_first_and_equal_files_once():
    fills = [Fill(1, "a", "A", -0.9), Fill(2, "b", "B", -0.1), Fill(3, "a", "A", -0.9), Fill(4, "c", None, -0.01)]
    assert [f.sample for f in try_order(fills)] == [2, 1]
    unscored = [Fill(1, "a", "A"), Fill(2, "b", "B", -0.1)]
    assert [f.sample for f in try_order(unscored)] == [1, 2]  # not every fill scored: sampling order


def test_same_code_ignores_whitespace_and_comments():
    assert same_code("    x = a+b  # sum\n", "x = a + b\n")
    assert not same_code("x = a - b\n", "x = a + b\n")


# --- the cloze framing inside fix mode's search, on the demo repo's seeded bug (`>` for `>=`) -------------------

def cloze_run(tmp_path, demo_jobs, infills, replies=(), schedule="cloze@0.8", max_steps=None, layers=None):
    """A scripted fix run of the demo repo; the step budget is the schedule's length unless given (the search
    alone: with budget left after the schedule, the loop would go on)."""
    from pathlib import Path

    from pyharness.evals.demo import make_repo
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.loop.agent import AgentConfig
    from pyharness.loop.session import run_job
    from pyharness.loop.transcript import read_transcript

    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    model = ScriptedModel(replies=list(replies), infills=infills)
    max_steps = max_steps or (len(schedule.split(",")) if schedule else 8)
    result = run_job(repo, "fix", "", model, config=AgentConfig(max_steps=max_steps, schedule=schedule),
                     harness=HarnessConfig.parse_spec("on", layers))
    records = read_transcript(Path(result.transcript))
    return repo, model, result, records


BUGGY = "if line.quantity > BULK_THRESHOLD:"


def test_a_cloze_fill_repairs_the_masked_line_and_the_bug_is_never_shown(tmp_path, demo_jobs):
    infills = ["if line.quantity > BULK_THRESHOLD:",  # the masked line sent back: dropped, never run
               "if line.quantity >= BULK_THRESHOLD:", "if line.quantity >= BULK_THRESHOLD:",  # equal: run once
               "if line.quantity < BULK_THRESHOLD:", "if True:", "if line.quantity > BULK_THRESHOLD + 1:"]
    repo, model, result, records = cloze_run(tmp_path, demo_jobs, infills)
    assert result.outcome == "done", result.reason
    assert "if line.quantity >= BULK_THRESHOLD:" in (repo / "orders/pricing.py").read_text()
    assert model.infill_prompts and all(BUGGY not in p.prefix + p.suffix for p in model.infill_prompts)
    assert model.infill_prompts[0].prefix.rstrip(" ").endswith('at least BULK_THRESHOLD units, otherwise 0.0."""\n')
    cloze = result.trials["cloze"][0]
    assert cloze["hole"] == "orders/pricing.py:17" and cloze["rank"] == 1 and cloze["samples"] == 6
    assert cloze["dropped"] == 1 and cloze["checked"] == 1  # sample 2 passed first; 3 was 2 again
    assert result.trials["passed_by"] == "cloze line 1 sample 2"
    turn = next(r for r in records if r["event"] == "turn" and r.get("trial", {}).get("framing") == "cloze")
    assert [f["used"] for f in turn["trial"]["fills"]] == [False, True, True, True, True, True]


def test_fills_that_fix_nothing_leave_the_users_tree_as_it_was(tmp_path, demo_jobs):
    import hashlib

    infills = ["if line.quantity > BULK_THRESHOLD:", "if line.quantity < BULK_THRESHOLD:", "if False:",
               "if line.quantity > BULK_THRESHOLD * 2:", "if line.quantity == 0:", "if line.total() < 0:"] * 8
    repo = tmp_path / "seed"
    from pyharness.evals.demo import make_repo

    digest = hashlib.sha256((make_repo(repo, demo_jobs["fix"]) / "orders/pricing.py").read_bytes()).hexdigest()
    repo2, model, result, _ = cloze_run(tmp_path, demo_jobs, infills, replies=["Action: run_tests()"])
    assert result.outcome != "done"
    assert hashlib.sha256((repo2 / "orders/pricing.py").read_bytes()).hexdigest() == digest
    assert all(r["checked"] <= 5 for r in result.trials["cloze"])  # the masked line itself never ran


# --- the layer `cloze`: fix mode's default schedule, and what the loop is told when the schedule runs out ---------

FIXED = "if line.quantity >= BULK_THRESHOLD:"
WRONG_FUNCTION = ("```python\ndef bulk_discount(line):\n    return 0.0\n```")


def test_with_the_layer_and_a_model_that_fills_holes_fix_mode_starts_with_cloze_rounds(tmp_path, demo_jobs):
    from pyharness.harness.pipeline import LAYERS, HarnessConfig
    from pyharness.trials.schedule import CLOZE_SCHEDULE, FIX_SCHEDULE, default_schedule

    fim, chat = ScriptedModel(replies=[], infills=[]), ScriptedModel(replies=[])
    without = HarnessConfig.parse_spec("on", ",".join(name for name in LAYERS if name != "cloze"))
    assert default_schedule("fix", HarnessConfig(), fim) == CLOZE_SCHEDULE
    assert default_schedule("fix", without, fim) == FIX_SCHEDULE  # `--layers` without it: today's schedule
    assert default_schedule("fix", HarnessConfig(), chat) == FIX_SCHEDULE  # no fill-in-the-middle
    _, model, result, records = cloze_run(tmp_path, demo_jobs, [FIXED] * 6, schedule=None, max_steps=1)
    assert result.outcome == "done" and result.trials["passed_by"] == "cloze line 1 sample 1"
    assert len(model.infill_prompts) == 6 and model.calls == 0  # one round, no chat request


def test_without_the_layer_the_same_model_gets_todays_fix_schedule(tmp_path, demo_jobs):
    from pyharness.harness.pipeline import LAYERS

    layers = ",".join(name for name in LAYERS if name != "cloze")
    fixed = ("```python\ndef bulk_discount(line):\n    if line.quantity >= BULK_THRESHOLD:\n"
             "        return line.total() * BULK_RATE\n    return 0.0\n```")
    _, model, result, records = cloze_run(tmp_path, demo_jobs, [FIXED], replies=[fixed], schedule=None,
                                          max_steps=1, layers=layers)
    assert result.outcome == "done" and result.trials["passed_by"] == "greedy", result.reason
    assert model.infill_prompts == [] and "cloze" not in result.trials
    turn = next(r for r in records if r["event"] == "turn")
    assert turn["trial"]["framing"] == "plain"


def test_when_the_schedule_runs_out_with_budget_left_the_loop_goes_on_with_the_one_failure(tmp_path, demo_jobs):
    edit = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    ' + BUGGY + "\n=======\n    " + FIXED +
            "\n>>>>>>> REPLACE")
    replies = [WRONG_FUNCTION, edit, "Action: run_tests()"]
    repo, model, result, records = cloze_run(tmp_path, demo_jobs, None, replies=replies, schedule="plain@0",
                                             max_steps=4)
    assert result.trials["run"] == 1 and result.trials["handoff"] == "before"  # nothing beat the code as it was
    loop = [r for r in records if r["event"] == "turn" and "trial" not in r]
    told = loop[0]["new_messages"][1]["content"]
    assert "none passed all checks" in told and "unchanged" in told and "test_bulk_discount_applies" in told
    assert result.outcome == "done", result.reason
    assert FIXED in (repo / "orders/pricing.py").read_text()


def test_with_deepcloze_rounds_spend_no_step_and_a_hole_the_model_stands_by_is_passed_over(tmp_path, demo_jobs):
    """Every fill of the first hole writes its code back: with `deepcloze` the next hole is masked at once and no
    round spends a step; without it the round is the step and ends with that one hole (the earlier rounds)."""
    from pyharness.harness.pipeline import LAYERS

    infills = [BUGGY] * 6 + ["pass"] * 60
    _, model, deep, _ = cloze_run(tmp_path / "deep", demo_jobs, infills, replies=["Action: run_tests()"],
                                  max_steps=1)
    first, *rest = deep.trials["cloze"]
    assert first["hole"] == "orders/pricing.py:17" and first["dropped"] == 6 and first["checked"] == 0
    assert rest and deep.steps == 1 and model.calls == 1  # later holes at once; the one step was the loop's turn
    assert all(r["checked"] == 0 for r in rest[:-1]) and (rest[-1]["checked"] > 0 or len(rest) == 11)
    assert len(model.infill_prompts) == 6 * len(deep.trials["cloze"])

    layers = ",".join(name for name in LAYERS if name != "deepcloze")
    _, model, shallow, _ = cloze_run(tmp_path / "shallow", demo_jobs, infills, max_steps=1, layers=layers)
    assert [r["hole"] for r in shallow.trials["cloze"]] == ["orders/pricing.py:17"] and shallow.steps == 1
    assert len(model.infill_prompts) == 6


def test_with_clozetest_each_fill_sees_the_failing_test_and_without_it_none(tmp_path, demo_jobs):
    from pyharness.harness.pipeline import LAYERS

    _, model, result, _ = cloze_run(tmp_path / "on", demo_jobs, [FIXED] * 6, schedule=None, max_steps=1)
    assert result.outcome == "done"
    [(path, text)] = model.infill_prompts[0].options.files
    assert path == "tests/test_pricing.py" and model.infill_prompts[0].options.path == "orders/pricing.py"
    assert text.startswith("import pytest\nfrom orders.lines import OrderLine\n")
    assert "def test_bulk_discount_applies():\n    line = OrderLine(\"PEN-BLUE\", 10, 2.50)" in text
    assert "# E   AssertionError: assert 0.0 == 2.5\n# E    +  where 0.0 = bulk_discount(" in text and BUGGY not in text
    assert all(p.options.files == model.infill_prompts[0].options.files for p in model.infill_prompts)
    layers = ",".join(name for name in LAYERS if name != "clozetest")
    _, model, result, _ = cloze_run(tmp_path / "off", demo_jobs, [FIXED] * 6, schedule=None, max_steps=1,
                                    layers=layers)
    assert result.outcome == "done" and all(p.options.files == () for p in model.infill_prompts)
