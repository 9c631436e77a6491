"""The terminal experience on a real terminal: ph runs on a pseudo-terminal that is its controlling terminal (the
^C byte typed there is a real Ctrl-C). Model choice and `ph config`, the openai: backend streaming, --json with
stdout on a terminal or a pipe, the conventions (--version, -h, one-line errors, exit codes), ask's citation check,
`ph eval`'s progress bar, and Ctrl-C. The piped side of each is in test_config, test_openai, test_conventions,
test_citations and test_view; the live view on a terminal is in test_view."""

import json
import re
import sys
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI
from runkit import LOOP_LAYERS, on_terminal, write_replies

ASK = ['Action: read {"path": "orders/tax.py"}', 'Action: answer {"text": "Books pay 0.05 (orders/tax.py:9)."}']
COLOUR = re.compile(r"\x1b\[(?:[0-9;]*;)?(?:3[0-7]|9[0-7]|38;)")
TRACEBACK = "Traceback (most recent call last)"


def scripted(tmp_path, replies: list[str], name: str = "r.json") -> str:
    return f"scripted:{write_replies(tmp_path / name, replies)}"


# model choice ----------------------------------------------------------------------------------------------------


def test_ph_config_on_a_terminal_names_each_value_and_its_source(tmp_path):
    user = tmp_path / "user.toml"
    user.write_text('model = "ollama:from-user"\nmax-steps = 7\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\n\n[tool.ph]\nmodel = "ollama:from-repo"\n')
    shown = on_terminal(["config", "--repo", str(repo)], env={"PH_CONFIG": str(user), "PH_MODEL": "ollama:from-env"})
    assert shown.code == 0, shown.out
    lines = shown.text.splitlines()
    assert re.search(r"^model\s+env PH_MODEL\s+ollama:from-env$", shown.text, re.M), lines
    assert re.search(r"^max-steps\s+user config\s+7$", shown.text, re.M), lines
    assert f"config file: {user} (found)" in shown.text


def test_a_run_on_a_terminal_says_which_model_ph_model_chose(orders, tmp_path):
    repo = orders("ask")
    shown = on_terminal(["ask", "rate?", "--repo", str(repo)], env={"PH_MODEL": scripted(tmp_path, ASK)})
    assert shown.code == 0, shown.out
    assert re.search(r"model: scripted:\S+ \(from env PH_MODEL\)", shown.text), shown.text
    assert "Books pay 0.05 (orders/tax.py:9)." in shown.text


def test_auto_choice_on_a_terminal_lists_what_ollama_has_in_one_line(orders, httpserver, tmp_path):
    httpserver.expect_request("/api/tags").respond_with_json({"models": [
        {"name": "qwen3:4b", "model": "qwen3:4b", "modified_at": "2025-01-01T00:00:00Z", "size": 1, "digest": "d"}]})
    host = httpserver.url_for("/").rstrip("/")
    shown = on_terminal(["ask", "rate?", "--repo", str(orders("ask"))],
                        env={"OLLAMA_HOST": host, "PH_CACHE_DIR": str(tmp_path / "no-packs")})
    assert shown.code == 1, shown.out
    assert TRACEBACK not in shown.text
    (line,) = [line for line in shown.text.splitlines() if line.strip()]
    said = f"ph: no model (chosen|found): Ollama at {host} has no llama3.1:8b \\(it has: qwen3:4b\\)"
    assert re.match(said, line), line
    assert "ph model pull" in line and "start Ollama" not in line


# the openai: backend ----------------------------------------------------------------------------------------------


def test_openai_backend_streams_on_a_terminal(orders, tmp_path):
    replies = iter(ASK)

    def chat(exchange):
        exchange.reply(f"Thought: read the tax table [first]\n{next(replies)}", pieces=4, delay=0.05)

    with FakeOpenAI(chat) as server:
        shown = on_terminal(["ask", "rate?", "--repo", str(orders("ask")), "--model", f"openai:fake@{server.url}"])
    assert shown.code == 0, shown.out
    assert "Thought: read the tax table [first]" in shown.text  # streamed, markup-like text literal
    assert "Books pay 0.05 (orders/tax.py:9)." in shown.text
    assert re.search(r"done: answer cites orders/tax\.py:9", shown.text)


def test_openai_server_down_is_one_line_on_a_terminal(orders):
    shown = on_terminal(["ask", "rate?", "--repo", str(orders("ask")), "--model", "openai:fake@http://127.0.0.1:9/v1"])
    assert shown.code == 1 and TRACEBACK not in shown.text
    (line,) = [line for line in shown.text.splitlines() if line.strip()]
    assert line.startswith("ph: no server at http://127.0.0.1:9/v1 (connection refused)")


# --json -------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stdout", ["own-terminal", "pipe"])
def test_json_with_stdout_on_a_terminal_or_a_pipe_is_one_plain_object(orders, tmp_path, stdout):
    repo = orders("ask")
    shown = on_terminal(["ask", "rate?", "--repo", str(repo), "--model", scripted(tmp_path, ASK), "--json"],
                        stdout=stdout)
    assert shown.code == 0, shown.out
    assert "\x1b" not in shown.stdout  # no colour or cursor movement on stdout, even when it is a terminal
    lines = [line for line in shown.stdout.replace("\r", "").splitlines() if line]
    assert len(lines) == 1, shown.stdout
    obj = json.loads(lines[0])
    assert obj["command"] == "ask" and obj["outcome"] == "done" and obj["exit_code"] == 0
    assert obj["answer"] == "Books pay 0.05 (orders/tax.py:9)."
    assert "done: answer cites orders/tax.py:9" in shown.text  # the live view stays on the terminal (stderr)
    assert "{" not in shown.text.replace("Action: answer {", "").replace("Action: read {", "")


# conventions --------------------------------------------------------------------------------------------------------


def test_version_and_short_help_on_a_terminal():
    version = on_terminal(["--version"])
    assert version.code == 0 and re.fullmatch(r"ph \(py-harness\) \d+\.\d+\.\d+\n", version.text), version.text
    helped = on_terminal(["-h"])
    assert helped.code == 0
    text = " ".join(helped.text.split())
    assert "Example: ph" in text and "130 interrupted" in text and "--install-completion" in text
    for command in ("ask", "fix", "add", "run", "demo", "eval", "undo", "config", "doctor"):
        assert f" {command} " in text, command


def test_the_installed_ph_script_answers_on_a_terminal():
    script = Path(sys.executable).with_name("ph")  # what `make demo` (pip install -e) puts beside the venv's python
    if not script.is_file():
        pytest.skip(f"no ph script beside {sys.executable}: ph is not installed in this environment")
    version = on_terminal(["--version"], program=[str(script)])
    assert version.code == 0 and re.fullmatch(r"ph \(py-harness\) \d+\.\d+\.\d+\n", version.text), version.text
    helped = on_terminal(["ask", "-h"], program=[str(script)])
    assert helped.code == 0 and "Example: ph ask" in helped.text and TRACEBACK not in helped.text


@pytest.mark.parametrize("args, start", [
    (["fix", "--max-steps", "0"], "ph: Invalid value for '--max-steps'"),
    (["ask", "   "], "ph: ph ask: the task is empty"),
    (["demo", "--only", "bogus"], "ph: "),
    (["ask", "q", "--bogus"], "ph: No such option: --bogus"),
])
def test_bad_input_on_a_terminal_is_one_line_and_exit_1(tmp_path, args, start):
    shown = on_terminal([*args, "--repo", str(tmp_path)] if args[0] != "demo" else args)
    assert shown.code == 1, shown.out
    lines = [line for line in shown.text.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith(start), lines
    assert "╭" not in shown.out and TRACEBACK not in shown.text  # no usage panel, no traceback


def test_a_run_that_stops_exits_2_on_a_terminal(orders, tmp_path):
    reads = ['Action: read {"path": "orders/tax.py"}'] * 3
    shown = on_terminal(["ask", "rate?", "--repo", str(orders("ask")), "--model", scripted(tmp_path, reads),
                         "--max-steps", "2"])
    assert shown.code == 2, shown.out
    assert re.search(r"^stopped: ", shown.text, re.M), shown.text


def test_quiet_and_verbose_on_a_terminal(orders, tmp_path):
    repo = orders("fix")
    fix = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
           "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")
    args = ["fix", "--repo", str(repo), "--model", scripted(tmp_path, [fix]), "--layers", LOOP_LAYERS]
    quiet = on_terminal([*args, "-q"])
    assert quiet.code == 0, quiet.out
    assert "+    if line.quantity >= BULK_THRESHOLD:" not in quiet.text  # no diff, no step lines
    summary = " ".join(quiet.text[quiet.text.index("done: "):].split())  # one line, wrapped at the terminal's width
    assert "1 file(s) changed (+1 -1)" in summary and "→ 0 failing" in summary
    assert on_terminal(["undo", "--repo", str(repo)]).code == 0
    verbose = on_terminal([*args, "-v"])
    assert verbose.code == 0, verbose.out
    assert re.search(r"\x1b\[2m[^\n]*harness steer\.autotest", verbose.out)  # the harness's repairs, dimmed
    assert "+    if line.quantity >= BULK_THRESHOLD:" in verbose.text


# ask's citation check ------------------------------------------------------------------------------------------------


def test_a_wrong_citation_on_a_terminal_is_refused_then_the_right_one_accepted(orders, tmp_path):
    replies = [ASK[0], 'Action: answer {"text": "Books pay 0.05 (orders/tax.py:16)."}', ASK[1]]
    shown = on_terminal(["ask", "rate?", "--repo", str(orders("ask")), "--model", scripted(tmp_path, replies)])
    assert shown.code == 0, shown.out
    assert "not accepted: orders/tax.py:16 does not hold 0.05" in shown.text
    assert "done: answer cites orders/tax.py:9, which holds 0.05" in shown.text
    assert shown.text.rstrip().endswith("Books pay 0.05 (orders/tax.py:9).")


# ph eval ----------------------------------------------------------------------------------------------------------


def test_eval_on_a_terminal_draws_its_progress_bar(tmp_path):
    tasks, answers = tmp_path / "tasks", tmp_path / "replies"
    tasks.mkdir()
    answers.mkdir()
    for name, code in (("shout", "print(input().upper())"), ("whisper", "print(input())")):
        (tasks / f"{name}.json").write_text(json.dumps({
            "id": name, "prompt": f"Print the input line in {'upper' if name == 'shout' else 'lower'} case.",
            "example": {"stdin": "Hi\n", "stdout": "HI\n" if name == "shout" else "hi\n"},
            "hidden": [{"stdin": "Ab\n", "stdout": "AB\n" if name == "shout" else "ab\n"}]}))
        write_replies(answers / f"{name}.json", [f'Action: write {{"path": "main.py"}}\n```python\n{code}\n```'])
    shown = on_terminal(["eval", str(tasks), "--model", f"scripted:{answers}", "--configs", "harness=on",
                         "--out", str(tmp_path / "out")], cwd=tmp_path)
    assert shown.code == 0, shown.out
    assert re.search(r"2/2", shown.text) and "1 passed" in shown.text, shown.text
    assert re.search(r"\[\d/2\] shout harness=on r0: pass", shown.text)
    assert re.search(r"\[\d/2\] whisper harness=on r0: fail", shown.text)
    # whisper's first program fails the example; the search asks again and the scripted model has no more replies:
    # the run's error is shown with its real reason, under the run and in the end's error list
    assert "error: the scripted model ran out of replies after 1 turns" in shown.text
    assert "1 x the scripted model ran out of replies after 1 turns" in shown.text


# Ctrl-C ---------------------------------------------------------------------------------------------------------------


def test_ctrl_c_on_a_terminal_ends_the_run_says_what_changed_and_undo_puts_it_back(orders, tmp_path):
    repo = orders("run")
    before = (repo / "orders" / "tax.py").read_bytes()
    edit = ('Action: edit {"path": "orders/tax.py"}\n<<<<<<< SEARCH\n    "books": 0.05,\n=======\n    "books": 0.06,\n'
            ">>>>>>> REPLACE")
    sent = []

    def chat(exchange):
        sent.append(exchange.body)
        if len(sent) == 1:
            exchange.reply(f"Thought: change it\n{edit}")
        else:  # the second turn never finishes: the user gives up
            exchange.event({"choices": [{"index": 0, "delta": {"content": "Thought: waiting for "}}]})
            import time

            time.sleep(30)

    with FakeOpenAI(chat) as server:
        shown = on_terminal(["run", "set the books rate to 0.06", "--repo", str(repo), "--model",
                             f"openai:fake@{server.url}", "--layers", LOOP_LAYERS], interrupt_when="waiting for",
                            timeout=60)
    assert shown.code == 130, shown.out
    assert TRACEBACK not in shown.text and "KeyboardInterrupt" not in shown.text
    assert "ph: interrupted after changing 1 file(s) (orders/tax.py): `ph undo` puts them back" in shown.text
    assert (repo / "orders" / "tax.py").read_bytes() != before
    undone = on_terminal(["undo", "--repo", str(repo)])
    assert undone.code == 0, undone.out
    assert (repo / "orders" / "tax.py").read_bytes() == before
