"""The run view: every event's text shown literally, diffs and the end summary, -q/-v, streaming; piped through
CliRunner (plain, wrap-free, no escape bytes) and on a real terminal (a pty: status line, colour, NO_COLOR)."""

import io
import json
import re

import pytest
from rich.console import Console
from runkit import ANSI, LOOP_LAYERS, on_terminal
from typer.testing import CliRunner

from pyharness.actions.base import Observation
from pyharness.cli.console import RunView
from pyharness.cli.evalview import EvalView, show_errors
from pyharness.cli.main import app
from pyharness.cli.recap import Recap, plus_minus, unified
from pyharness.harness.call import ActionCall, Intervention
from pyharness.models.base import Reply
from pyharness.runstate import RunResult
from pyharness.workspace import testrun

BAD = "[bold]x[/bold] [/dim] A[i] \x1b[31m"
"""Markup-like and ANSI text as a model, a file or a test may hold it."""
SHOWN = BAD.replace("\x1b", "\\x1b")
"""BAD as it must show: markup literal, the escape character as visible text."""
LITERAL = ("[bold]x[/bold]", "[/dim]", "A[i]", "\\x1b[31m")
FIX_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
            "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")
SGR = re.compile(r"\x1b\[[0-9;]*m")


def every_event() -> list[tuple[str, dict]]:
    """One event of each kind the view renders, each carrying BAD wherever outside text can go."""
    failing = testrun.TestRun(exit_code=1, counts={"failed": 1, "passed": 2}, failing=[f"tests/test_a.py::{BAD}"],
                      output=BAD, first_traceback=BAD, summary_line=BAD)
    green = testrun.TestRun(exit_code=0, counts={"passed": 3}, output=BAD)
    result = RunResult(outcome="done", reason=BAD, steps=2, prompt_tokens=120, cached_tokens=80,
                       completion_tokens=30, transcript=f"/tmp/{BAD}.jsonl", changed=[f"{BAD}.py"],
                       refusals=[f"write .git/{BAD}: refused"])
    return [
        ("start", {"mode": "fix", "task": BAD, "model": BAD, "repo": f"/tmp/{BAD}"}),
        ("phase", {"name": f"running tests {BAD}"}),
        ("tests", {"run": failing, "targets": []}),
        ("thinking", {"step": 1, "purpose": BAD}),
        ("token", {"text": f"Thought: {BAD}\n"}),
        ("token", {"text": f"Action: edit {BAD}"}),
        ("reply", {"reply": Reply(text=BAD, prompt_tokens=120, cached_tokens=80, completion_tokens=30, seconds=2.0)}),
        ("action", {"call": ActionCall(f"edit{BAD}", {"path": BAD})}),
        ("change", {"path": f"{BAD}.py", "before": f"a = 1\n{BAD}\n", "after": f"a = 2\n{BAD}\n"}),
        ("tests", {"run": green, "targets": []}),
        ("observation", {"observation": Observation(f"Edited {BAD}", ok=True),
                         "interventions": [Intervention(f"repair.{BAD}", BAD)]}),
        ("refused", {"text": f"write .git/{BAD}: refused"}),
        ("retry", {"error": BAD, "wait": 1.0}),
        ("end", {"result": result}),
    ]


def test_the_markup_test_covers_every_event_kind_the_view_handles():
    handled = {name[len("_on_"):] for name in dir(RunView) if name.startswith("_on_")}
    assert handled == {kind for kind, _ in every_event()}


@pytest.mark.parametrize("terminal", [False, True], ids=["piped", "terminal"])
def test_every_event_kind_shows_markup_and_escapes_literally(terminal):
    shown = io.StringIO()
    console = Console(file=shown, width=300, force_terminal=terminal, highlight=False, soft_wrap=not terminal)
    view = RunView(console, stream=True, verbose=True, live=terminal)
    for kind, data in every_event():
        view(kind, **data)
    view.close()
    raw = shown.getvalue()
    assert "\x1b[31m[/dim]" not in raw and "\x1b[31m\n" not in raw  # the model's own escape never reaches it
    text = ANSI.sub("", raw) if terminal else raw
    assert "\x1b" not in text  # piped: no escape byte at all; terminal: none but rich's own styles and cursor moves
    for literal in LITERAL:
        assert text.count(literal) >= 9, (literal, text)
    assert f"Thought: {SHOWN}" in text  # streamed model text
    assert f"+{SHOWN}" not in text  # unchanged line of the diff: context, not added
    assert "-a = 1" in text and "+a = 2" in text
    assert re.search(rf"^ {re.escape(SHOWN)}\s*$", text, re.MULTILINE)  # the diff's context line, made visible
    assert f"harness repair.{SHOWN}" in text  # verbose: the harness's repairs
    assert f"refused write .git/{SHOWN}" in text


def test_recap_counts_net_lines_and_tests_before_and_after():
    assert plus_minus("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)
    assert unified("new.py", None, "x = 1").startswith("--- /dev/null\n+++ b/new.py\n")
    assert "\\ No newline at end of file" in unified("new.py", None, "x = 1")
    failing = testrun.TestRun(exit_code=1, counts={"failed": 1, "passed": 5}, failing=["t::a"])
    green = testrun.TestRun(exit_code=0, counts={"passed": 6})
    recap = Recap()
    recap.tested(failing, [])
    assert recap.tests_line() == "1 failing (5 passed)"  # nothing changed
    recap.change("m.py", "a\n", "b\n")
    recap.change("m.py", "b\n", "c\nd\n")
    assert recap.files() == [("m.py", 2, 1)]  # net over the run: a -> c, d
    assert recap.tests_line() == "1 failing (5 passed) before; not run after the last change"
    recap.tested(green, ["t::a"])  # a narrower run does not count as the suite after
    assert recap.tests_line() == "1 failing (5 passed) before; not run after the last change"
    recap.tested(green, [])
    assert recap.tests_line() == "1 failing (5 passed) → 0 failing (6 passed)"
    later = Recap()
    later.change("n.py", None, "x\n")
    later.tested(green, [])
    assert later.tests_line() == "0 failing (6 passed) after the change"
    assert later.files(["n.py", "gone.py"]) == [("n.py", 1, 0), ("gone.py", None, None)]


# the CLI, piped (CliRunner: stderr is not a terminal) -----------------------------------------------------------


def invoke(*args: str, env: dict | None = None):
    result = CliRunner().invoke(app, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


def fix_repo(orders, tmp_path, reply: str = FIX_EDIT):
    repo = orders("fix")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps([f"Thought: {BAD} so\n{reply}"]))
    return repo, ["fix", "--repo", str(repo), "--model", f"scripted:{replies}", "--layers", LOOP_LAYERS]


def test_piped_fix_shows_the_diff_and_the_summary_in_plain_lines(orders, tmp_path):
    repo, args = fix_repo(orders, tmp_path)
    code, out, err = invoke(*args)
    assert code == 0, err
    assert out == ""  # the view writes to stderr only
    assert "\x1b" not in err
    lines = err.splitlines()
    assert "--- a/orders/pricing.py" in lines and "+++ b/orders/pricing.py" in lines
    assert "-    if line.quantity > BULK_THRESHOLD:" in lines and "+    if line.quantity >= BULK_THRESHOLD:" in lines
    assert "· running tests" in lines  # the first test run is announced before step 1
    assert any(re.fullmatch(r"step 1 \d+\.\d s · \d+ prompt \+ \d+ tokens.*", line) for line in lines)
    assert "Thought:" not in err  # streaming is off when piped
    summary = err[err.index("\ndone: "):]
    assert "  files      orders/pricing.py +1 -1" in summary
    assert re.search(r"  tests      1 failing \(\d+ passed\) → 0 failing \(\d+ passed\)", summary)
    assert re.search(r"  tokens     \d+ prompt \(0 cached\) \+ \d+ completion", summary)
    assert re.search(r"  time       \d+ s, 1 step\(s\)", summary)
    assert f"ph undo --repo {repo}" in summary and "  transcript " in summary
    assert max(len(line) for line in lines) > 80  # wrap-free: long lines stay whole
    assert "harness steer.autotest" not in err  # repairs only with -v


def test_piped_quiet_verbose_and_stream(orders, tmp_path):
    repo, args = fix_repo(orders, tmp_path)
    code, out, err = invoke(*args, "-q")
    assert code == 0, err
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("done: 1 failing test(s) now pass") and "1 file(s) changed (+1 -1)" in err
    assert "→ 0 failing" in err and f"`ph undo --repo {repo}` puts the files back" in err
    code, _, err = invoke("undo", "--repo", str(repo))
    assert code == 0
    code, _, err = invoke(*args, "-v", "--stream")
    assert code == 0, err
    assert "  harness steer.autotest" in err and "  harness accept.auto" in err
    assert f"Thought: {SHOWN} so\n" in err  # streamed, literal, newline-terminated at the reply's end
    assert "\n>>>>>>> REPLACE\nstep 1 " in err
    code, _, err = invoke(*args, "-q", "-v")
    assert code == 1 and err == "ph: -q and -v ask for less and more at once: choose one\n"


def test_piped_run_that_creates_a_file_diffs_it_against_dev_null(orders, tmp_path):
    repo = orders("run")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps([f'Action: write {{"path": "orders/extra.py"}}\n```python\nX = "{BAD}"\n```',
                                   'Action: done {"summary": "added"}']))
    code, _, err = invoke("run", "add X", "--repo", str(repo), "--model", f"scripted:{replies}")
    assert code == 0, err
    assert "--- /dev/null\n+++ b/orders/extra.py\n@@ -0,0 +1 @@\n" in err
    assert f'+X = "{SHOWN}"' in err and "\x1b" not in err
    assert "  files      orders/extra.py +1 -0" in err
    assert re.search(r"  tests      0 failing \(\d+ passed\) after the change", err)


def test_ask_without_changes_gives_no_undo_hint(orders, tmp_path):
    repo = orders("ask")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(['Action: read("orders/tax.py")',
                                   'Action: answer {"text": "orders/tax.py:9 holds 0.05"}']))
    code, out, err = invoke("ask", "where?", "--repo", str(repo), "--model", f"scripted:{replies}")
    assert code == 0, err
    assert out.strip() == "orders/tax.py:9 holds 0.05"
    assert "  files      none changed" in err and "ph undo" not in err and "  tests " not in err


# the CLI on a terminal (a pty) -----------------------------------------------------------------------------------


def test_terminal_fix_streams_shows_status_coloured_diff_and_summary(orders, tmp_path):
    repo, args = fix_repo(orders, tmp_path)
    shown = on_terminal(args)
    code, out = shown.code, shown.out
    assert code == 0, out
    text = ANSI.sub("", out).replace("\r", "")
    assert re.search(r"running tests · \d+ s · run \d+ s", text)  # the status line while tests run
    assert f"Thought: {SHOWN} so\n" in text  # streaming is on by default on a terminal, literal
    assert "\x1b[31m[/dim]" not in out
    assert re.search(r"\x1b\[[0-9;]*m-    if line\.quantity > BULK_THRESHOLD:", out)  # coloured diff lines
    assert re.search(r"\x1b\[[0-9;]*m\+    if line\.quantity >= BULK_THRESHOLD:", out)
    assert "orders/pricing.py +1 -1" in text and "→ 0 failing" in text and "ph undo --repo" in text
    assert re.search(r"\x1b\[3[0-9]m|\x1b\[9[0-7]", out)  # colour on a terminal


def test_terminal_honours_no_color(orders, tmp_path):
    _, args = fix_repo(orders, tmp_path)
    shown = on_terminal([*args, "--no-stream"], env={"NO_COLOR": "1"})
    code, out = shown.code, shown.out
    assert code == 0, out
    assert not re.search(r"\x1b\[(?:[0-9;]*;)?(?:3[0-9]|9[0-7]|38;|4[0-9])", out), out  # no colour at all
    text = ANSI.sub("", out).replace("\r", "")
    assert "-    if line.quantity > BULK_THRESHOLD:" in text and "Thought:" not in text
    assert "orders/pricing.py +1 -1" in text


# ph eval's progress ----------------------------------------------------------------------------------------------


def record(task: str, ok: bool, outcome: str = "done", reason: str = "", note: str = "") -> dict:
    return {"task": task, "model": "scripted", "config": "harness=on", "repeat": 0, "pass_strict": ok,
            "pass_lenient": ok, "prompt_tokens": 10, "completion_tokens": 5, "steps": 1, "wall_seconds": 1.0,
            "outcome": outcome, "reason": reason, "note": note}


def test_eval_view_plain_lines_give_the_real_reason_and_literal_text():
    shown = io.StringIO()
    runs = [record("a", True), record(f"b{BAD}", False, note=f"expected '[a]\\n[b,c]\\n' {BAD}"),
            record("c", False, "error", reason="ollama: connection refused [x]", note="no main.py was written")]
    with EvalView(3, console=Console(file=shown, width=300, soft_wrap=True)) as view:
        for n, run in enumerate(runs, 1):
            view(run, n, 3)
    show_errors(Console(file=shown, width=300, soft_wrap=True), runs + [runs[2]])
    text = shown.getvalue()
    assert "\x1b" not in text
    assert "[1/3] a harness=on r0: pass (1 steps, 15 tokens, 1 s)" in text
    assert f"[2/3] b{SHOWN} harness=on r0: fail" in text and f"expected '[a]\\n[b,c]\\n' {SHOWN}" in text
    assert "    error: ollama: connection refused [x]" in text and "no main.py" not in text
    assert ("2 run(s) ended in a model error; --retry-errors runs them again:\n"
            "  2 x ollama: connection refused [x]") in text


def test_eval_view_on_a_terminal_draws_a_bar_with_pass_count_and_eta():
    shown = io.StringIO()
    console = Console(file=shown, width=160, force_terminal=True)
    with EvalView(2, console=console) as view:
        view(record("a", True), 1, 2)
        view(record("b", False, note="wrong"), 2, 2)
    text = ANSI.sub("", shown.getvalue())
    assert "2/2" in text and "1 passed" in text and "ETA" in text
    assert "[2/2] b harness=on r0: fail" in text
