"""Holes wider than one statement (a span, an insertion) and fills kept under later holes (multi-hunk fixes)."""

from pathlib import Path

from pyharness.models.scripted import ScriptedModel
from pyharness.trials.cloze import sample_hole
from pyharness.trials.holes import Hole
from pyharness.trials.wideholes import Region, interleave, rebase, wide_regions

SOURCE = '''def mean(values, default=None):
    total = 0
    for v in values:
        total += v
    if default is not None and not values:
        return default
    elif not values:
        raise ValueError("empty")
    count = len(values)
    return total / count
'''


def test_a_compound_statement_spans_its_block_and_a_simple_one_takes_its_neighbour():
    assert wide_regions(SOURCE, 3, 3, 6) == [Region("span", 3, 4), Region("insert", 3, 2)]  # the for with its block
    assert wide_regions(SOURCE, 2, 2, 6) == [Region("span", 2, 4), Region("insert", 2, 1)]  # total = 0 and the for
    assert wide_regions(SOURCE, 10, 10, 6) == [Region("span", 9, 10), Region("insert", 10, 9)]  # the last: and before
    assert wide_regions(SOURCE, 5, 5, 3) == [Region("insert", 5, 4)]  # the if, elif and raise: over 3 lines
    assert wide_regions(SOURCE, 7, 7, 6) == [Region("span", 7, 8)]  # nothing goes in above an elif
    assert wide_regions(SOURCE, 1, 1, 6) == [] and wide_regions("def (", 1, 1, 6) == []


def test_a_statement_alone_in_its_block_spans_with_the_condition_that_guards_it():
    assert wide_regions(SOURCE, 4, 4, 6) == [Region("span", 3, 4), Region("insert", 4, 3)]  # the for's one statement
    assert wide_regions(SOURCE, 6, 6, 6) == [Region("span", 5, 6), Region("insert", 6, 5)]  # the if's
    assert wide_regions(SOURCE, 8, 8, 6) == [Region("span", 7, 8), Region("insert", 8, 7)]  # the elif's
    alone = "def f(x):\n    return x\n\n\ndef g(x):\n    try:\n        return x\n    finally:\n        pass\n"
    assert wide_regions(alone, 2, 2, 6) == [Region("insert", 2, 1)]  # a def's header is no guard
    assert wide_regions(alone, 7, 7, 6) == [Region("insert", 7, 6)]  # nor is `try:`


def hole(kind: str, start: int, end: int, text: str = SOURCE) -> Hole:
    lines = text.splitlines(keepends=True)
    first = lines[start - 1]
    return Hole("m.py", start, end, 1, lines, first[:len(first) - len(first.lstrip())], kind=kind)


def test_an_insertion_takes_a_guard_and_drops_a_repeat_of_the_line_below():
    above = hole("insert", 9, 8)
    assert above.original == "" and above.suffix.startswith("    count = len(values)\n")
    assert above.prefix.endswith('raise ValueError("empty")\n    ')
    guarded = above.filled("if values is None:\n        return None\n    count = len(values)")
    assert guarded is not None  # the repeat of `count = ...` is cut, the guard goes in once
    assert "    if values is None:\n        return None\n    count = len(values)\n    return" in guarded
    assert above.filled("count = len(values)") is None  # only the next line again: nothing to try
    assert above.where == "m.py:^9" and above.label == "insert 1"


def test_a_span_takes_the_whole_fill_that_parses_not_its_first_line():
    span = hole("span", 9, 10)
    assert span.original == "    count = len(values)\n    return total / count\n"
    filled = span.filled("count = len(values) or 1\n    return total / count")
    assert filled is not None and filled.endswith("    count = len(values) or 1\n    return total / count\n")
    assert span.filled("count = len(values)\n    return total / count") is None  # the masked code again
    assert span.where == "m.py:9-10"


def test_a_wide_hole_is_asked_for_several_statements():
    model = ScriptedModel(replies=[], infills=["if not values:\n        return 0"])
    fills = sample_hole(model, hole("insert", 9, 8), [0.0], seed=1)
    stop = model.infill_prompts[0].options.stop
    assert stop == ["\n\n", "\n    count = len(values)"] and model.infill_prompts[0].options.max_tokens >= 160
    assert fills[0].file is not None and "    if not values:\n        return 0\n    count" in fills[0].file


def test_the_two_best_statements_go_first_then_each_suspects_wide_holes():
    lines = [hole("line", n, n) for n in (10, 9, 2, 3)]
    for n, h in enumerate(lines, 1):
        h.rank = n
    wide = {1: ["span 1", "insert 1"], 2: ["span 2"], 3: ["insert 3"]}
    order = interleave(lines, wide)
    assert [getattr(h, "start", h) for h in order] == [10, 9, "span 1", "insert 1", 2, "span 2", 3, "insert 3"]
    assert interleave(lines[:1], wide)[1:] == ["span 1", "insert 1", "span 2", "insert 3"]  # none left out


def test_holes_below_a_kept_fill_move_with_it_and_those_under_it_are_dropped():
    new = SOURCE.replace("    count = len(values)\n", "    if not values:\n        return 0\n    count = len(values)\n")
    new_lines = new.splitlines(keepends=True)
    todo = [hole("line", 2, 2), hole("span", 9, 10), hole("line", 10, 10), hole("insert", 9, 8),
            Hole("other.py", 9, 9, 2, ["x\n"] * 9, "")]
    after = rebase(todo, "m.py", 9, 8, new_lines, len(SOURCE.splitlines()))  # an insertion of 2 lines above 9
    assert [(h.path, h.kind, h.start, h.end) for h in after] == [
        ("m.py", "line", 2, 2), ("m.py", "span", 11, 12), ("m.py", "line", 12, 12), ("m.py", "insert", 11, 10),
        ("other.py", "line", 9, 9)]  # the insertion above `count = ...` stays above it, under the new guard
    assert after[2].original == "    return total / count\n" and after[4].lines == ["x\n"] * 9
    replaced = rebase(todo, "m.py", 9, 10, new_lines, len(SOURCE.splitlines()))  # a span of two: what was under
    assert [(h.path, h.start) for h in replaced] == [("m.py", 2), ("other.py", 9)]  # it or at its top goes


# --- in a fix run: a missing guard, and a bug in two places -----------------------------------------------------

def fix_run(tmp_path: Path, files: dict[str, str], infills: list[str], layers: str | None = None, steps: int = 4):
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.loop.agent import AgentConfig
    from pyharness.loop.session import run_job

    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    model = ScriptedModel(replies=["Action: run_tests()"] * steps, infills=infills)  # the loop's turns after them
    return run_job(tmp_path, "fix", "", model, config=AgentConfig(max_steps=steps, schedule="cloze@0.8," * (steps - 1)
                                                                  + "cloze@0.8"),
                   harness=HarnessConfig.parse_spec("on", layers))


STATS = "def mean(values):\n    total = sum(values)\n    return total / len(values)\n"
STATS_TESTS = ("from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n\n\n"
               "def test_empty():\n    assert mean([]) == 0.0\n")
GUARD = "if not values:\n        return 0.0"


def test_a_missing_guard_is_found_by_an_insertion_hole(tmp_path):
    from pyharness.harness.pipeline import LAYERS

    files = {"stats.py": STATS, "tests/test_stats.py": STATS_TESTS}
    result = fix_run(tmp_path / "wide", files, [GUARD] * 60)
    assert result.outcome == "done", result.reason
    assert result.trials["passed_by"].startswith("cloze insert"), result.trials
    assert "\n    if not values:\n        return 0.0\n    return total / len(values)\n" in \
        (tmp_path / "wide/stats.py").read_text()  # above the line that divides (the best-ranked suspect)
    assert any(r["kind"] == "insert" for r in result.trials["cloze"])

    narrow = ",".join(name for name in LAYERS if name != "wideholes")
    result = fix_run(tmp_path / "narrow", files, [GUARD] * 60, layers=narrow)
    assert all(r["kind"] == "line" for r in result.trials["cloze"])
    assert result.outcome != "done"  # one statement at a time, the guard has nowhere to go (a line hole's fill
    assert (tmp_path / "narrow/stats.py").read_text() == STATS  # stops at its first line: `if not values:` alone)


SHAPES = ("def area(w, h):\n    return w + h\n\n\ndef perimeter(w, h):\n    return w * h * 2\n")
SHAPES_TESTS = ("from shapes import area, perimeter\n\n\ndef test_area():\n    assert area(2, 3) == 6\n\n\n"
                "def test_perimeter():\n    assert perimeter(2, 3) == 10\n")
HUNKS = ["return w * h", "return 2 * (w + h)", "return w - h", "return h", "return w", "return 0"]


def test_a_fill_that_fixes_one_of_two_failing_tests_is_kept_and_the_next_hole_is_filled_on_top(tmp_path):
    from pyharness.harness.pipeline import LAYERS

    files = {"shapes.py": SHAPES, "tests/test_shapes.py": SHAPES_TESTS}
    result = fix_run(tmp_path / "stack", files, HUNKS * 10)
    assert result.outcome == "done", result.reason
    assert (tmp_path / "stack/shapes.py").read_text().count("return w * h\n") == 1
    assert "return 2 * (w + h)" in (tmp_path / "stack/shapes.py").read_text()
    first, second = result.trials["cloze"][:2]
    assert first["kept"] and second["on_top_of"] == [first["kept"]] and second["passed"]
    assert result.trials["combined"] == [first["kept"]]

    alone = ",".join(name for name in LAYERS if name != "stacking")
    result = fix_run(tmp_path / "alone", files, HUNKS * 10, layers=alone)
    assert result.outcome != "done" and "combined" not in result.trials
    assert not any(r.get("kept") for r in result.trials["cloze"])
    assert (tmp_path / "alone/shapes.py").read_text() == SHAPES  # each hunk was found, on the original, alone


BOUNDS = "def low(x):\n    return x + 1\n\n\ndef high(x):\n    return x - 1\n"
BOUNDS_TESTS = "from bounds import high, low\n\n\ndef test_bounds():\n    assert low(3) == 3\n    assert high(3) == 3\n"


def test_a_fill_that_moves_the_one_failing_test_on_to_its_next_assertion_is_kept_and_the_holes_ranked_again(tmp_path):
    # high() never ran before low() was fixed: only ranking the lines again from the new failure finds its hole
    from pyharness.harness.pipeline import LAYERS
    from pyharness.loop.transcript import read_transcript

    files = {"bounds.py": BOUNDS, "tests/test_bounds.py": BOUNDS_TESTS}
    result = fix_run(tmp_path / "stack", files, ["return x"] * 60)
    assert result.outcome == "done", result.reason
    assert (tmp_path / "stack/bounds.py").read_text().count("    return x\n") == 2
    kept = [r for r in result.trials["cloze"] if r.get("kept")]
    assert len(kept) == 1 and result.trials["combined"] == [kept[0]["kept"]]
    said = [i["detail"] for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"
            for i in r.get("interventions", []) if i["kind"] == "trials.combined"]
    assert said == [f"{kept[0]['kept']} kept: tests/test_bounds.py::test_bounds got further (line 6, its assertion)"]

    alone = ",".join(name for name in LAYERS if name != "stacking")
    result = fix_run(tmp_path / "alone", files, ["return x"] * 60, layers=alone)
    assert result.outcome != "done" and "combined" not in result.trials
    assert (tmp_path / "alone/bounds.py").read_text() == BOUNDS  # each hunk alone leaves the test failing
