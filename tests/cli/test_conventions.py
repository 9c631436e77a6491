"""CLI conventions: --json (one object on stdout), examples in every --help, completion, exit codes that mean
something, one-line errors for bad input, git-root discovery, `ph show` defaulting to the latest run."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from runkit import LOOP_LAYERS, write_replies
from typer.testing import CliRunner

from pyharness.cli.main import app
from pyharness.models.packs import DEFAULT_PACK, PACKS

FIX_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
            "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")
ASK = ['Action: read {"path": "orders/tax.py"}', 'Action: answer {"text": "Books pay 0.05 (orders/tax.py:9)."}']
OLLAMA_DOWN = "http://127.0.0.1:9"


def ph(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2]), **(env or {})}
    return subprocess.run([sys.executable, "-m", "pyharness.cli", *args], capture_output=True, text=True,
                          timeout=120, cwd=cwd, env=env)


def one_object(proc: subprocess.CompletedProcess) -> dict:
    """stdout holds exactly one JSON object, on one line, and nothing else."""
    lines = proc.stdout.splitlines()
    assert len(lines) == 1, proc.stdout
    obj = json.loads(lines[0])
    assert isinstance(obj, dict)
    return obj


def test_json_ask_is_one_object_with_the_answer_and_the_view_goes_to_stderr(orders, tmp_path):
    repo = orders("ask")
    done = ph("ask", "rate?", "--repo", str(repo), "--model", f"scripted:{write_replies(tmp_path / 'r.json', ASK)}",
              "--json")
    obj = one_object(done)
    assert done.returncode == 0 and obj["exit_code"] == 0
    assert obj["command"] == "ask" and obj["outcome"] == "done"
    assert obj["answer"] == "Books pay 0.05 (orders/tax.py:9)."
    assert obj["reason"] == "answer cites orders/tax.py:9, which holds 0.05"
    assert obj["steps"] == 2 and obj["files_changed"] == [] and obj["refusals"] == []
    assert obj["tokens"]["prompt"] > 0 and set(obj["tokens"]) == {"prompt", "cached", "completion"}
    assert Path(obj["transcript"]).is_file() and obj["seconds"] >= 0
    assert "done" in done.stderr  # the human view is still there, on stderr


def test_json_fix_and_run_report_the_files_changed(orders, tmp_path):
    repo = orders("fix")
    fixed = ph("fix", "--repo", str(repo), "--model", f"scripted:{write_replies(tmp_path / 'f.json', [FIX_EDIT])}",
               "--layers", LOOP_LAYERS, "--json")
    obj = one_object(fixed)
    assert fixed.returncode == 0 and obj["outcome"] == "done" and obj["files_changed"] == ["orders/pricing.py"]
    assert "answer" not in obj
    repo = orders("run")
    replies = write_replies(tmp_path / "r.json", ['Action: write {"path": "orders/extra.py"}\n```python\nX = 1\n```',
                                                  'Action: done {"summary": "added"}'])
    ran = ph("run", "add X", "--repo", str(repo), "--model", f"scripted:{replies}", "--json")
    obj = one_object(ran)
    assert ran.returncode == 0 and obj["command"] == "run" and obj["files_changed"] == ["orders/extra.py"]


def test_json_add_that_stops_exits_2_with_the_reason(orders, tmp_path):
    repo = orders("add")
    replies = write_replies(tmp_path / "a.json", ['Action: list {}'])
    stopped = ph("add", "a feature", "--repo", str(repo), "--model", f"scripted:{replies}", "--max-steps", "1",
                 "--json")
    obj = one_object(stopped)
    assert stopped.returncode == 2 and obj["exit_code"] == 2
    assert obj["outcome"] == "stopped" and "step budget of 1 used up" in obj["reason"]


def test_json_failure_is_still_one_object(tmp_path):
    missing = ph("ask", "rate?", "--repo", str(tmp_path / "nope"), "--json")
    obj = one_object(missing)
    assert missing.returncode == 1 and obj == {**obj, "command": "ask", "outcome": "error", "exit_code": 1}
    assert obj["reason"] == f"repo {tmp_path / 'nope'} does not exist"
    assert missing.stderr.strip() == f"ph: repo {tmp_path / 'nope'} does not exist"


def test_json_log_lists_the_runs(orders, tmp_path):
    repo = orders("ask")
    empty = ph("log", "--repo", str(repo), "--json")
    assert empty.returncode == 0 and one_object(empty)["runs"] == []
    assert ph("ask", "rate?", "--repo", str(repo), "--model",
              f"scripted:{write_replies(tmp_path / 'r.json', ASK)}").returncode == 0
    listed = one_object(ph("log", "--repo", str(repo), "--json"))
    (run,) = listed["runs"]
    assert run["mode"] == "ask" and run["outcome"] == "done" and run["steps"] == 2 and run["task"] == "rate?"
    assert Path(run["transcript"]).is_file() and run["run"] == Path(run["transcript"]).stem


def fake_llama(tmp_path: Path, body: str) -> str:
    """A folder holding a llama_cpp package whose import runs `body`, for PYTHONPATH."""
    folder = tmp_path / "fake"
    (folder / "llama_cpp").mkdir(parents=True)
    (folder / "llama_cpp" / "__init__.py").write_text(body)
    return f"{folder}{os.pathsep}{Path(__file__).parents[2]}"


def present_pack(tmp_path: Path) -> Path:
    """A cache dir whose default pack has the right size (sparse: no disk used); doctor checks only the size."""
    path = tmp_path / "cache" / "packs" / PACKS[DEFAULT_PACK].filename
    path.parent.mkdir(parents=True)
    with open(path, "wb") as f:
        f.truncate(PACKS[DEFAULT_PACK].size)
    return tmp_path / "cache"


def test_doctor_fails_when_the_pack_is_there_but_llama_cpp_does_not_import(tmp_path):
    env = {"PH_CACHE_DIR": str(present_pack(tmp_path)), "OLLAMA_HOST": OLLAMA_DOWN,
           "PYTHONPATH": fake_llama(tmp_path, "raise ImportError('libllama.so: cannot open shared object file')")}
    doctor = ph("doctor", env=env)
    assert doctor.returncode == 1
    assert f"ok  pack {DEFAULT_PACK}" in doctor.stdout
    assert "no  llama-cpp-python" in doctor.stdout and "libllama.so" in doctor.stdout
    assert "no  embedded model" in doctor.stdout and "no  ollama" in doctor.stdout
    assert doctor.stderr.startswith("ph: no model can run")
    as_json = ph("doctor", "--json", env=env)
    obj = one_object(as_json)
    assert as_json.returncode == 1 and obj["ok"] is False and obj["reason"].startswith("no model can run")
    checks = {c["name"]: c for c in obj["checks"]}
    assert checks[f"pack {DEFAULT_PACK}"]["ok"] and not checks["embedded model"]["ok"]


FAKE_LLAMA = """
import os, signal
class Llama:
    def __init__(self, model_path, **kwargs):
        assert os.path.getsize(model_path) > 0
    def create_completion(self, prompt, max_tokens):
        {decode}
"""


def test_doctor_passes_when_the_embedded_model_can_run(tmp_path):
    env = {"PH_CACHE_DIR": str(present_pack(tmp_path)), "OLLAMA_HOST": OLLAMA_DOWN,
           "PYTHONPATH": fake_llama(tmp_path, FAKE_LLAMA.format(decode="return {'choices': [{'text': ' f'}]}"))}
    doctor = ph("doctor", "--json", env=env)
    obj = one_object(doctor)
    assert doctor.returncode == 0 and obj["ok"] and obj["reason"] == ""
    assert {c["name"]: c["ok"] for c in obj["checks"]}["embedded model"] is True


def test_doctor_fails_when_the_build_crashes_in_its_first_decode(tmp_path):
    """A llama.cpp build that imports but dies in decode (ggml's AMX kernels on some Xeons): doctor runs one decode in
    a child process, so it reports the crash instead of 'can run' and lives on to say so."""
    env = {"PH_CACHE_DIR": str(present_pack(tmp_path)), "OLLAMA_HOST": OLLAMA_DOWN,
           "PYTHONPATH": fake_llama(tmp_path, FAKE_LLAMA.format(decode="os.kill(os.getpid(), signal.SIGSEGV)"))}
    doctor = ph("doctor", env=env)
    assert doctor.returncode == 1
    assert "ok  llama-cpp-python" in doctor.stdout
    assert "no  embedded model" in doctor.stdout and "crashed in a one-token test decode (SIGSEGV)" in doctor.stdout
    assert doctor.stderr.startswith("ph: no model can run: the embedded model: crashed") and "AMX" in doctor.stderr


def test_doctor_passes_with_ollama_alone(tmp_path, httpserver):
    httpserver.expect_request("/api/tags").respond_with_json(
        {"models": [{"model": "llama3.1:8b", "name": "llama3.1:8b"}]})
    env = {"PH_CACHE_DIR": str(tmp_path / "empty"), "OLLAMA_HOST": httpserver.url_for("/").rstrip("/")}
    doctor = ph("doctor", env=env)
    assert doctor.returncode == 0, doctor.stderr
    assert "ok  ollama" in doctor.stdout and "no  embedded model" in doctor.stdout


def test_json_eval_gives_the_summary_per_configuration(tmp_path):
    task = {"id": "shout", "prompt": "Print the input line in upper case.",
            "example": {"stdin": "hi\n", "stdout": "HI\n"}, "hidden": [{"stdin": "a b\n", "stdout": "A B\n"}],
            "reference": "print(input().upper())\n"}
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "shout.json").write_text(json.dumps(task))
    (tmp_path / "replies").mkdir()
    write_replies(tmp_path / "replies" / "shout.json",
                  ['Action: write {"path": "main.py"}\n```python\nprint(input().upper())\n```'])
    done = ph("eval", str(tmp_path / "tasks"), "--model", f"scripted:{tmp_path / 'replies'}", "--configs",
              "harness=on", "--out", str(tmp_path / "out"), "--json", cwd=tmp_path)
    obj = one_object(done)
    assert done.returncode == 0, done.stderr
    (config,) = obj["configurations"]
    assert config["config"] == "harness=on" and config["runs"] == 1 and config["passed"] == 1
    assert obj["results"] == str(tmp_path / "out" / "results.jsonl") and "[1/1] shout" in done.stderr


def every_command() -> list[list[str]]:
    group = typer.main.get_command(app)
    paths = []
    for name, command in group.commands.items():
        subs = getattr(command, "commands", None)
        paths += [[name, sub] for sub in subs] if subs else [[name]]
    return paths


@pytest.mark.parametrize("path", every_command(), ids=" ".join)
def test_every_command_help_has_an_example(path):
    shown = CliRunner().invoke(app, [*path, "--help"], prog_name="ph")
    assert shown.exit_code == 0 and "Example: ph " + path[0] in shown.output


def test_top_help_has_exit_codes_and_completion_is_offered(monkeypatch):
    from typer import completion as typer_completion

    shown = CliRunner().invoke(app, ["--help"], prog_name="ph")
    assert shown.exit_code == 0
    text = " ".join(shown.output.split())
    for code in ("0 the run ended done", "1 bad input or set-up", "2 the run ended without done",
                 "130 interrupted"):
        assert code in text
    assert "--install-completion" in shown.output
    # typer detects the shell from the parent process; a run started by a script has none, so bash is said here
    monkeypatch.setattr(typer_completion, "_get_shell_name", lambda: "bash")
    script = CliRunner().invoke(app, ["--show-completion"], prog_name="ph")
    assert script.exit_code == 0 and "_PH_COMPLETE=complete_bash" in script.output, (script.output, script.exception)


@pytest.mark.parametrize("args, message", [
    (["ask", "q", "--max-seconds", "0"], "ph: Invalid value for '--max-seconds': 0 is not more than 0"),
    (["fix", "--max-seconds", "-5"], "ph: Invalid value for '--max-seconds': -5 is not more than 0"),
    (["fix", "--test-timeout", "0"], "ph: Invalid value for '--test-timeout'"),
    (["fix", "--max-steps", "0"], "ph: Invalid value for '--max-steps'"),
    (["ask", "q", "--bogus"], "ph: No such option: --bogus"),
])
def test_bad_options_are_one_line_and_exit_1(args, message, tmp_path):
    refused = ph(*args, "--repo", str(tmp_path), "--model", "scripted:none.json")
    assert refused.returncode == 1
    assert refused.stderr.startswith(message) and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stdout == "" and not (tmp_path / ".ph").exists()


def test_a_file_or_a_missing_folder_as_repo_is_one_line(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    for repo, what in ((tmp_path / "f.py", "is not a directory"), (tmp_path / "nope", "does not exist")):
        for command in (["ask", "q"], ["fix"], ["log"], ["show"], ["undo"]):
            refused = ph(*command, "--repo", str(repo))
            assert refused.returncode == 1, command
            assert refused.stderr.strip() == f"ph: repo {repo} {what}", command


def test_without_repo_a_subfolder_of_a_git_repo_means_its_root(orders, tmp_path):
    repo = orders("ask")
    replies = write_replies(tmp_path / "r.json", ASK)
    asked = ph("ask", "rate?", "--model", f"scripted:{replies}", cwd=repo / "orders")
    assert asked.returncode == 0, asked.stderr
    assert f"ph: working in {repo.resolve()}, the top of the git repo" in asked.stderr
    assert asked.stdout.strip() == "Books pay 0.05 (orders/tax.py:9)."
    assert len(list((repo / ".ph" / "runs").glob("*.jsonl"))) == 1 and not (repo / "orders" / ".ph").exists()
    at_root = ph("log", cwd=repo)
    assert at_root.returncode == 0 and "working in" not in at_root.stderr and "\tdone\t" in at_root.stdout
    given = ph("log", "--repo", str(repo / "orders"))  # an explicit --repo is taken as given
    assert given.returncode == 0 and given.stdout == "" and "no runs recorded in" in given.stderr


def test_show_defaults_to_the_latest_run_and_says_when_there_is_none(orders, tmp_path):
    repo = orders("ask")
    none = ph("show", "--repo", str(repo))
    assert none.returncode == 1 and none.stderr.strip() == f"ph: no runs recorded in {repo.resolve()} yet: " \
        "ph ask, fix, add or run records one"
    log = ph("log", "--repo", str(repo))
    assert log.returncode == 0 and log.stdout == ""
    assert log.stderr.strip() == f"no runs recorded in {repo.resolve()} yet"
    for answer in ("Books pay 0.05 (orders/tax.py:9).", "Food pays 0.07 (orders/tax.py:8)."):
        replies = write_replies(tmp_path / "r.json", [ASK[0], f'Action: answer {{"text": "{answer}"}}'])
        assert ph("ask", "rate?", "--repo", str(repo), "--model", f"scripted:{replies}").returncode == 0
    shown = ph("show", "--repo", str(repo))
    assert shown.returncode == 0 and shown.stdout.startswith("# ask with scripted")
    assert "Food pays 0.07" in shown.stdout and "Books pay" not in shown.stdout
