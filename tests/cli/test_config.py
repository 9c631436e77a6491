"""Where the model and the budgets come from: flag > PH_MODEL > the repo's [tool.ph] model > the user config file >
auto; `ph config`; broken config files; auto-selection that says what it picked."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pyharness.cli.config import effective, read_repo_config
from pyharness.cli.main import app
from pyharness.errors import ModelError, UserError
from pyharness.loop.transcript import latest_runs, read_transcript
from pyharness.models.packs import DEFAULT_PACK, PACKS
from pyharness.models.resolve import auto_model

ANSWER = 'Action: answer {"text": "orders/tax.py:9 sets the books rate to 0.05"}'
READ = 'Action: read {"path": "orders/tax.py"}'


@pytest.fixture
def user_config(monkeypatch, tmp_path):
    """write(text) -> the user config file, holding `text` (PH_CONFIG points at it)."""
    path = tmp_path / "user" / "config.toml"
    path.parent.mkdir()
    monkeypatch.setenv("PH_CONFIG", str(path))

    def write(text: str) -> Path:
        path.write_text(text)
        return path

    return write


def pyproject(repo: Path, tool_ph: str) -> None:
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n\n[tool.ph]\n" + tool_ph)


def replies(tmp_path: Path, *texts: str, name: str = "r.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(list(texts)))
    return f"scripted:{path}"


def model_of(root, flags=None, env=None):
    return effective(flags or {}, {"model": None}, root, env=env or {}).values["model"]


# precedence --------------------------------------------------------------------------------------------------------


def test_each_model_source_wins_over_the_next(tmp_path, user_config):
    repo = tmp_path / "repo"
    repo.mkdir()
    assert (model_of(repo).value, model_of(repo).source) == (None, "default")
    pyproject(repo, 'model = "ollama:from-repo"\n')
    assert (model_of(repo).value, model_of(repo).source) == ("ollama:from-repo", "pyproject.toml")
    path = user_config('model = "ollama:from-user"\n')  # the user's own choice wins over the repo's (case 75)
    assert (model_of(repo).value, model_of(repo).source, model_of(repo).where) == ("ollama:from-user", "user config",
                                                                                   str(path))
    env = {"PH_MODEL": "ollama:from-env"}
    assert (model_of(repo, env=env).value, model_of(repo, env=env).source) == ("ollama:from-env", "env PH_MODEL")
    flag = model_of(repo, {"model": "ollama:from-flag"}, env)
    assert (flag.value, flag.source) == ("ollama:from-flag", "flag")


def test_budgets_come_from_the_flag_then_the_user_config_then_the_default(tmp_path, user_config):
    user_config("max-steps = 7\ntest_timeout = 30\nstream = true\n")
    got = effective({"max_seconds": 60.0, "test_timeout": 5.0},
                    {"max_steps": 20, "max_seconds": 900.0, "test_timeout": 120.0, "stream": False}, None, env={})
    shown = {k: (s.value, s.source) for k, s in got.values.items()}
    assert shown == {"max_steps": (7, "user config"), "max_seconds": (60.0, "flag"), "test_timeout": (5.0, "flag"),
                     "stream": (True, "user config")}


def test_a_run_takes_its_model_from_ph_model_and_says_so(orders, tmp_path, monkeypatch):
    repo = orders("ask")
    spec = replies(tmp_path, READ, ANSWER)
    monkeypatch.setenv("PH_MODEL", spec)
    done = CliRunner().invoke(app, ["ask", "Which rate applies to books?", "--repo", str(repo)])
    assert done.exit_code == 0, done.output
    assert f"model: {spec} (from env PH_MODEL)" in done.stderr.replace("\n", "")
    assert read_transcript(latest_runs(repo, 1)[0])[0]["model"] == spec


def test_the_flag_beats_ph_model_and_says_nothing_about_it(orders, tmp_path, monkeypatch):
    repo = orders("ask")
    monkeypatch.setenv("PH_MODEL", "ollama:never-used")
    done = CliRunner().invoke(app, ["ask", "rate?", "--repo", str(repo), "--model", replies(tmp_path, READ, ANSWER)])
    assert done.exit_code == 0, done.output
    assert "model:" not in done.stderr and "never-used" not in done.output


def test_user_config_max_steps_applies_unless_a_flag_is_typed(orders, tmp_path, user_config):
    repo = orders("ask")
    user_config(f'model = "{replies(tmp_path, READ, READ, READ, ANSWER)}"\nmax-steps = 2\n')
    done = CliRunner().invoke(app, ["ask", "rate?", "--repo", str(repo)])
    assert done.exit_code == 2  # stopped by the budget from the config file
    assert read_transcript(latest_runs(repo, 1)[0])[-1]["steps"] == 2
    again = CliRunner().invoke(app, ["ask", "rate?", "--repo", str(repo), "--max-steps", "12"])
    assert again.exit_code == 0, again.output  # the typed flag wins: four steps were allowed


# ph config ---------------------------------------------------------------------------------------------------------


def test_ph_config_names_each_value_and_its_source(tmp_path, user_config, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    path = user_config("max-steps = 30\nstream = true\n")
    pyproject(repo, 'model = "ollama:qwen2.5-coder:7b"\n')
    done = CliRunner().invoke(app, ["config", "--repo", str(repo)])
    assert done.exit_code == 0, done.output
    rows = {line.split()[0]: line.split(None, 1)[1] for line in done.stdout.splitlines()[1:-1]}
    assert rows["model"].split() == ["pyproject.toml", "ollama:qwen2.5-coder:7b"]
    assert rows["max-steps"].split() == ["user", "config", "30"]
    assert rows["stream"].split() == ["user", "config", "true"]
    assert rows["max-seconds"].split() == ["default", "900"]
    assert rows["test-timeout"].split() == ["default", "120"]
    assert done.stdout.splitlines()[-1] == f"config file: {path} (found)"
    monkeypatch.setenv("PH_MODEL", "openai:qwen@http://127.0.0.1:8080/v1")
    by_env = CliRunner().invoke(app, ["config", "--repo", str(repo)])
    assert "model        env PH_MODEL    openai:qwen@http://127.0.0.1:8080/v1" in by_env.stdout
    by_flag = CliRunner().invoke(app, ["config", "--repo", str(repo), "--model", "ollama:x"])
    assert "model        flag            ollama:x" in by_flag.stdout


def test_ph_config_shows_what_auto_would_pick_now(tmp_path, monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")  # nothing listens there
    monkeypatch.setenv("PH_CACHE_DIR", str(tmp_path / "cache"))
    done = CliRunner().invoke(app, ["config", "--repo", str(tmp_path)])
    assert done.exit_code == 0
    line = next(row for row in done.stdout.splitlines() if row.startswith("model"))
    assert "default" in line and "auto, now none: no model found: start Ollama" in line


@pytest.mark.parametrize(("text", "message"), [
    ('model = "ollama:x"\nmax-steps = \n', "line 2: Invalid value (column 13): not valid TOML"),
    ("\n\nmax_step = 3\n", "line 3: unknown setting 'max_step' (known: model, max-steps, max-seconds, "
                          "test-timeout, stream, python)"),
    ("max-seconds = 'soon'\n", "line 1: max-seconds = 'soon' should be a number of seconds above 0"),
    ("max-steps = 0\n", "line 1: max-steps = 0 should be a whole number above 0"),
    ("stream = 1\n", "line 1: stream = 1 should be true or false"),
])
def test_a_broken_config_file_is_one_line_naming_file_and_line_and_nothing_runs(orders, tmp_path, user_config,
                                                                                  text, message):
    repo = orders("ask")
    path = user_config(text)
    for args in (["config", "--repo", str(repo)], ["ask", "rate?", "--repo", str(repo), "--model",
                                                   replies(tmp_path, READ, ANSWER)]):
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 1
        assert done.stderr.strip().replace("\n", "") == f"ph: config file {path} {message}"
        assert done.stdout == ""
    assert not (repo / ".ph" / "runs").exists()


def test_a_broken_pyproject_is_named_with_its_line(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.ph]\nmodel = ollama\n")
    with pytest.raises(UserError, match=r"pyproject.toml line 2: Invalid value \(column 9\): not valid TOML"):
        read_repo_config(tmp_path)


# the repo cannot widen limits ----------------------------------------------------------------------------------------


def test_a_repo_may_set_the_model_but_no_limit(tmp_path):
    pyproject(tmp_path, 'model = "ollama:qwen"\nmax_steps = 1000\ntest-timeout = 99999\nprotect = []\n')
    model, notes = read_repo_config(tmp_path)
    assert model == "ollama:qwen"
    assert notes == [f"ignoring [tool.ph] max_steps, protect, test-timeout in {tmp_path / 'pyproject.toml'}: a repo "
                     "may set only `model`; limits come from flags or your config file"]


@pytest.mark.parametrize(("spec", "allowed"), [
    ("ollama:qwen2.5-coder:7b", True),
    (f"llamacpp:{DEFAULT_PACK}", True),
    ("openai:qwen", True),
    ("openai:qwen@http://127.0.0.1:8080/v1", False),  # the repo picks the port: docs/safety-cases.md case 75
    ("openai:qwen@http://localhost:1234/v1", False),  # any local process may listen there
    ("openai:qwen@http://127.0.0.2:1234/v1", False),  # any local process may listen there
    ("openai:qwen@http://[::1]:1234/v1", False),  # any local process may listen there
    ("openai:qwen@https://collector.example/v1", False),  # would carry the prompt and OPENAI_API_KEY away
    ("llamacpp:/tmp/crafted.gguf", False),  # a file of the repo's choosing, parsed by llama.cpp
    ("scripted:replies.json", False),
    ("", False),
])
def test_which_models_a_repo_may_name(tmp_path, spec, allowed):
    pyproject(tmp_path, f"model = {spec!r}\n")
    model, notes = read_repo_config(tmp_path)
    assert (model == spec) is allowed
    assert bool(notes) is not allowed
    if not allowed:
        assert notes[0].startswith(f"ignoring [tool.ph] model = {spec!r} in ")


def test_a_run_ignores_the_repo_budgets_and_keeps_the_users(orders, tmp_path, user_config):
    repo = orders("ask")
    pyproject(repo, "max_steps = 100\nmax-seconds = 100000\n")
    user_config(f'model = "{replies(tmp_path, READ, READ, READ, ANSWER)}"\nmax-steps = 2\n')
    done = CliRunner().invoke(app, ["ask", "rate?", "--repo", str(repo)])
    assert done.exit_code == 2
    assert read_transcript(latest_runs(repo, 1)[0])[-1]["steps"] == 2
    assert "ph: note: ignoring [tool.ph] max-seconds, max_steps in" in done.stderr.replace("\n", "")


# auto-selection ------------------------------------------------------------------------------------------------------


def ollama_with(httpserver, *names: str) -> str:
    httpserver.expect_request("/api/tags").respond_with_json({"models": [
        {"name": n, "model": n, "modified_at": "2025-01-01T00:00:00Z", "size": 1, "digest": "d"} for n in names]})
    return httpserver.url_for("/").rstrip("/")


def present_pack(tmp_path, monkeypatch) -> None:
    """A file of the pack's size where the pack goes (sparse: nothing is loaded, only resolved)."""
    monkeypatch.setenv("PH_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "cache" / "packs" / PACKS[DEFAULT_PACK].filename
    path.parent.mkdir(parents=True)
    with open(path, "wb") as f:
        f.truncate(PACKS[DEFAULT_PACK].size)


def test_auto_takes_ollama_when_it_has_the_default(httpserver, monkeypatch):
    host = ollama_with(httpserver, "llama3.1:8b", "qwen3:4b")
    monkeypatch.setenv("OLLAMA_HOST", host)
    model, why = auto_model()
    assert model.name == "ollama:llama3.1:8b" and why == f"auto: Ollama at {host} has llama3.1:8b"


def test_auto_says_ollama_lacks_the_default_and_takes_the_pack(httpserver, monkeypatch, tmp_path):
    host = ollama_with(httpserver, "qwen3:4b", "phi3:mini")
    monkeypatch.setenv("OLLAMA_HOST", host)
    present_pack(tmp_path, monkeypatch)
    model, why = auto_model()
    assert model.name == f"llamacpp:{DEFAULT_PACK}"
    assert why == (f"auto: Ollama at {host} has no llama3.1:8b (it has: phi3:mini, qwen3:4b), embedded pack present")


def test_auto_says_ollama_is_not_running_and_takes_the_pack(monkeypatch, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:9")
    present_pack(tmp_path, monkeypatch)
    assert auto_model()[1] == "auto: Ollama not running at http://127.0.0.1:9, embedded pack present"


def test_ollama_without_the_default_and_no_pack_lists_its_models(httpserver, monkeypatch, tmp_path):
    host = ollama_with(httpserver, "qwen3:4b")
    monkeypatch.setenv("OLLAMA_HOST", host)
    monkeypatch.setenv("PH_CACHE_DIR", str(tmp_path / "cache"))
    with pytest.raises(ModelError) as info:
        auto_model()
    message = str(info.value)
    assert message.startswith(f"no model chosen: Ollama at {host} has no llama3.1:8b (it has: qwen3:4b): name one "
                              "with --model ollama:qwen3:4b")
    assert "start Ollama" not in message and "ph model pull" in message


def test_a_run_with_no_model_named_says_which_it_picked(orders, httpserver, monkeypatch):
    host = ollama_with(httpserver, "llama3.1:8b")
    body = "".join(json.dumps(line) + "\n" for line in [
        {"model": "llama3.1:8b", "created_at": "2025-01-01T00:00:00Z",
         "message": {"role": "assistant", "content": ANSWER}, "done": False},
        {"model": "llama3.1:8b", "created_at": "2025-01-01T00:00:01Z", "message": {"role": "assistant", "content": ""},
         "done": True, "done_reason": "stop", "prompt_eval_count": 10, "eval_count": 5}])
    httpserver.expect_request("/api/chat").respond_with_data(body, content_type="application/x-ndjson")
    monkeypatch.setenv("OLLAMA_HOST", host)
    repo = orders("ask")
    done = CliRunner().invoke(app, ["ask", "rate?", "--repo", str(repo), "--max-steps", "1"])
    assert f"model: ollama:llama3.1:8b (auto: Ollama at {host} has llama3.1:8b)" in done.stderr.replace("\n", "")
    assert read_transcript(latest_runs(repo, 1)[0])[0]["model"] == "ollama:llama3.1:8b"


def test_the_readme_config_example_is_a_valid_config_file(tmp_path, user_config):
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    example = readme.split("### Choosing a model", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    user_config(example)
    got = effective({}, {"model": None, "max_steps": 20, "max_seconds": 900.0, "test_timeout": 120.0, "stream": False},
                    None, env={})
    assert {s.source for s in got.values.values()} == {"user config"}
    assert got["model"].startswith("openai:") and got["max_steps"] == 30
