"""Fill-in-the-middle (`Model.infill`): Ollama's /api/generate and an OpenAI-compatible /v1/completions against local
fake servers, the scripted model's canned infills, and (live) the embedded Qwen2.5-Coder's FIM tokens."""

import json
import subprocess
import sys
import time

import pytest
from fake_openai import FakeOpenAI
from runkit import live_pack

from pyharness.errors import InfillUnsupported, ModelError
from pyharness.models.base import ChatOptions, Infill, InfillOptions
from pyharness.models.ollama import OllamaModel
from pyharness.models.openai import OpenAIModel
from pyharness.models.resolve import resolve_model
from pyharness.models.scripted import ScriptedModel

PREFIX = "def add(a, b):\n    "
SUFFIX = "\n\nprint(add(1, 2))\n"
MASKED = "return a - b"
"""The line a cloze candidate hides: it must reach no backend."""


def test_importing_the_backends_loads_no_client_and_no_numpy():
    code = ("import sys, pyharness.models.base, pyharness.models.llamacpp, pyharness.models.ollama, "
            "pyharness.models.openai, pyharness.models.scripted; "
            "print(*[m in sys.modules for m in ('llama_cpp', 'numpy', 'ollama', 'openai', 'httpx')])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"] * 5


def test_infill_options_stop_at_the_end_of_the_line_by_default():
    options = InfillOptions()
    assert options.stop == ["\n"] and options.temperature == 0.0
    assert InfillOptions().stop is not options.stop  # each call's list is its own


# --- OpenAI-compatible /v1/completions ---------------------------------------------------------------------------


def test_openai_infill_sends_prompt_suffix_and_options_and_reads_counts_and_logprobs():
    def complete(ex):
        ex.complete(["    return", " a", " +", " b"], logprobs=[-0.5, -0.25, -0.125, -0.125],
                    counts={"prompt": 40, "completion": 5, "cached": 32})

    with FakeOpenAI(lambda ex: ex.reply("unused"), complete=complete) as s:
        model = OpenAIModel("fake", s.url)
        assert model.fim
        got = model.infill(PREFIX, SUFFIX, InfillOptions(max_tokens=48, temperature=0.6, seed=5))
        sent = s.requests[0]
    assert (sent["model"], sent["prompt"], sent["suffix"]) == ("fake", PREFIX, SUFFIX)
    assert (sent["max_tokens"], sent["temperature"], sent["seed"], sent["stop"]) == (48, 0.6, 5, ["\n"])
    assert sent["logprobs"] == 1 and sent["stream"] is True and "messages" not in sent
    assert got.text == "    return a + b" and got.finish_reason == "stop"
    assert (got.prompt_tokens, got.cached_tokens, got.completion_tokens) == (40, 32, 5)
    assert got.logprob == pytest.approx(-0.25)  # the mean of the four tokens' log-probabilities
    assert got.seconds > 0


def test_openai_infill_is_cut_at_the_stop_a_server_ignores():
    tokens = ["    return", " a", " +", " b", "\n", "\n", "print(add(1, 2))"]
    with FakeOpenAI(lambda ex: ex.reply("unused"),
                    complete=lambda ex: ex.complete(tokens, logprobs=[-1.0, -1.0, -1.0, -1.0, -2.0, -9.0, -9.0])) as s:
        got = OpenAIModel("fake", s.url).infill(PREFIX, SUFFIX, InfillOptions())
    assert got.text == "    return a + b" and got.finish_reason == "stop"
    assert got.logprob == pytest.approx(-1.2)  # the tokens up to the one holding the stop, none after it


def test_openai_infill_without_logprobs_reports_none_and_a_cut_off_reports_length():
    with FakeOpenAI(lambda ex: ex.reply("unused"),
                    complete=lambda ex: ex.complete(["    return (a"], finish="length")) as s:
        got = OpenAIModel("fake", s.url).infill(PREFIX, SUFFIX, InfillOptions(max_tokens=1))
    assert (got.text, got.logprob, got.finish_reason) == ("    return (a", None, "length")


def test_openai_infill_sends_a_newline_for_an_empty_suffix():
    with FakeOpenAI(lambda ex: ex.reply("unused"), complete=lambda ex: ex.complete(["x = 1"])) as s:
        OpenAIModel("fake", s.url).infill("x = 0\n", "", InfillOptions())
        assert s.requests[0]["suffix"] == "\n"  # an empty suffix would read as "no suffix": a plain continuation


@pytest.mark.parametrize(("status", "error"), [
    (400, {"error": {"message": "suffix is not currently supported", "type": "BadRequestError"}}),  # vLLM
    (500, {"error": {"code": 500, "message": "Unsupported param: suffix", "type": "server_error"}}),  # llama-server
    (400, {"error": {"message": "Unrecognized request argument supplied: suffix", "type": "invalid_request_error"}}),
    (404, {"error": {"message": "This is a chat model and not supported in the v1/completions endpoint."}}),
])
def test_openai_server_that_takes_no_suffix_gives_infill_unsupported_once(status, error):
    with FakeOpenAI(lambda ex: ex.reply("unused"), complete=lambda ex: ex.status(status, error)) as s:
        model = OpenAIModel("fake", s.url)
        with pytest.raises(InfillUnsupported) as info:
            model.infill(PREFIX, SUFFIX, InfillOptions())
        assert not model.fim
        with pytest.raises(InfillUnsupported):
            model.infill(PREFIX, SUFFIX, InfillOptions())
        assert len(s.requests) == 1  # asked once: after a refusal the caller uses the chat framing
    message = str(info.value)
    assert "chat turn" in message and "\n" not in message
    assert isinstance(info.value, ModelError)  # uncaught, it is still a one-line model error


def test_openai_server_without_a_completions_route_gives_infill_unsupported():
    with FakeOpenAI(lambda ex: ex.reply("unused")) as s:  # /v1/completions answers 404; the model is listed
        model = OpenAIModel("fake", s.url)
        with pytest.raises(InfillUnsupported):
            model.infill(PREFIX, SUFFIX, InfillOptions())
    assert not model.fim


def test_openai_unrelated_server_error_stays_a_model_error():
    with FakeOpenAI(lambda ex: ex.reply("unused"),
                    complete=lambda ex: ex.status(500, {"error": {"message": "out of memory"}})) as s:
        model = OpenAIModel("fake", s.url)
        with pytest.raises(ModelError) as info:
            model.infill(PREFIX, SUFFIX, InfillOptions())
    assert not isinstance(info.value, InfillUnsupported) and info.value.transient
    assert "out of memory" in str(info.value) and model.fim


# --- Ollama /api/generate ----------------------------------------------------------------------------------------


def generated(text: str, logprob: float | None = None) -> dict:
    line = {"model": "qwen2.5-coder:1.5b", "created_at": "2025-01-01T00:00:00Z", "response": text, "done": False}
    if logprob is not None:
        line["logprobs"] = [{"token": text, "logprob": logprob}]
    return line


def generate_done(done_reason: str = "stop", prompt: int = 30, completion: int = 4) -> dict:
    return {"model": "qwen2.5-coder:1.5b", "created_at": "2025-01-01T00:00:01Z", "response": "", "done": True,
            "done_reason": done_reason, "prompt_eval_count": prompt, "eval_count": completion}


def ndjson(*lines: dict) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def ollama_at(httpserver) -> OllamaModel:
    return OllamaModel("qwen2.5-coder:1.5b", host=httpserver.url_for("/").rstrip("/"))


def test_ollama_infill_sends_prompt_suffix_and_options_and_reads_logprobs(httpserver):
    body = ndjson(generated("    return", -0.5), generated(" a + b", -0.25), generate_done(prompt=30, completion=2))
    httpserver.expect_request("/api/generate", method="POST").respond_with_data(body,
                                                                               content_type="application/x-ndjson")
    got = ollama_at(httpserver).infill(PREFIX, SUFFIX, InfillOptions(max_tokens=40, temperature=0.7, seed=3))

    sent = httpserver.log[-1][0].get_json()
    assert (sent["model"], sent["prompt"], sent["suffix"]) == ("qwen2.5-coder:1.5b", PREFIX, SUFFIX)
    assert sent["raw"] is False and sent["stream"] is True and sent["logprobs"] is True
    opts = sent["options"]
    assert (opts["temperature"], opts["seed"], opts["num_predict"], opts["stop"]) == (0.7, 3, 40, ["\n"])
    assert opts["num_ctx"] == 2048
    assert got.text == "    return a + b" and got.finish_reason == "stop"
    assert (got.prompt_tokens, got.completion_tokens, got.cached_tokens) == (30, 2, 0)
    assert got.logprob == pytest.approx(-0.375)


def test_ollama_infill_is_cut_at_the_stop_and_without_logprobs_reports_none(httpserver):
    body = ndjson(generated("    return a + b\n"), generated("\nprint(1)"), generate_done())
    httpserver.expect_request("/api/generate").respond_with_data(body, content_type="application/x-ndjson")
    got = ollama_at(httpserver).infill(PREFIX, SUFFIX, InfillOptions())
    assert (got.text, got.logprob, got.finish_reason) == ("    return a + b", None, "stop")


def test_ollama_infill_sends_a_newline_for_an_empty_suffix(httpserver):
    httpserver.expect_request("/api/generate").respond_with_data(ndjson(generated("x = 1"), generate_done()))
    ollama_at(httpserver).infill("x = 0\n", "", InfillOptions())
    assert httpserver.log[-1][0].get_json()["suffix"] == "\n"


def test_ollama_model_that_cannot_insert_gives_infill_unsupported(httpserver):
    error = {"error": "registry.ollama.ai/library/llama3.1:8b does not support insert"}
    httpserver.expect_request("/api/generate").respond_with_json(error, status=400)
    model = ollama_at(httpserver)
    model._fim = True  # as if /api/show had not said so
    with pytest.raises(InfillUnsupported) as info:
        model.infill(PREFIX, SUFFIX, InfillOptions())
    assert not model.fim and "chat turn" in str(info.value) and "\n" not in str(info.value)


def test_ollama_other_errors_stay_model_errors(httpserver):
    httpserver.expect_request("/api/generate").respond_with_json({"error": "model 'x' not found"}, status=404)
    with pytest.raises(ModelError) as info:
        ollama_at(httpserver).infill(PREFIX, SUFFIX, InfillOptions())
    assert not isinstance(info.value, InfillUnsupported) and "ollama pull" in str(info.value)


def shown(capabilities: list[str] | None = None, template: str = "") -> dict:
    body = {"template": template, "modelfile": "", "parameters": "", "model_info": {},
            "details": {"format": "gguf", "family": "qwen2"}}
    if capabilities is not None:
        body["capabilities"] = capabilities
    return body


@pytest.mark.parametrize(("body", "fim"), [
    (shown(["completion", "insert"]), True),
    (shown(["completion", "tools"]), False),
    (shown(None, "{{- if .Suffix }}<|fim_prefix|>{{ .Prompt }}<|fim_suffix|>{{ .Suffix }}<|fim_middle|>"), True),
    (shown(None, "{{ .Prompt }}"), False),
])
def test_ollama_fim_follows_what_the_server_says_of_the_model(httpserver, body, fim):
    httpserver.expect_request("/api/show", method="POST").respond_with_json(body)
    model = ollama_at(httpserver)
    assert model.fim is fim
    assert model.fim is fim and len(httpserver.log) == 1  # asked once
    assert httpserver.log[0][0].get_json()["model"] == "qwen2.5-coder:1.5b"


def test_ollama_fim_is_not_decided_while_the_server_does_not_answer(httpserver):
    httpserver.expect_request("/api/show").respond_with_data("not json", status=500)
    model = ollama_at(httpserver)
    assert model.fim is True  # unknown: the first infill will say what is wrong
    assert model._fim is None


# --- scripted ------------------------------------------------------------------------------------------------------


def test_scripted_infills_come_in_order_cut_at_the_stop_and_record_what_the_model_was_shown():
    canned = ["    return a + b\n    extra", Infill("return b + a", logprob=-0.4)]
    model = ScriptedModel(replies=["Thought: x"], infills=canned)
    assert model.fim
    first = model.infill(PREFIX, SUFFIX, InfillOptions())
    second = model.infill("def sub(a, b):\n    ", SUFFIX, InfillOptions(temperature=0.8, seed=2))
    assert (first.text, first.logprob, first.finish_reason) == ("    return a + b", None, "stop")
    assert (second.text, second.logprob) == ("return b + a", -0.4)
    assert first.prompt_tokens > 0 and first.completion_tokens > 0
    assert [(p.prefix, p.suffix) for p in model.infill_prompts] == [(PREFIX, SUFFIX), ("def sub(a, b):\n    ", SUFFIX)]
    assert model.infill_prompts[1].options.seed == 2
    assert not any(MASKED in p.prefix + p.suffix for p in model.infill_prompts)
    with pytest.raises(ModelError, match="ran out of infills after 2"):
        model.infill(PREFIX, SUFFIX, InfillOptions())
    assert model.chat([{"role": "user", "content": "hi"}], ChatOptions()).text == "Thought: x"  # a list of their own


def test_scripted_model_without_infills_has_no_fim():
    model = ScriptedModel(replies=["Thought: x"])
    assert not model.fim
    with pytest.raises(InfillUnsupported):
        model.infill(PREFIX, SUFFIX, InfillOptions())
    assert model.infill_prompts == []


def test_a_script_file_may_hold_replies_and_infills(tmp_path):
    script = tmp_path / "script.json"
    infills = ["    return a + b", {"text": "    return b + a", "logprob": -1}]
    script.write_text(json.dumps({"replies": ["Thought: one"], "infills": infills}))
    model = resolve_model(f"scripted:{script}")
    assert model.fim and model.replies == ["Thought: one"]
    assert [model.infill(PREFIX, SUFFIX, InfillOptions()).logprob for _ in range(2)] == [None, -1.0]

    plain = tmp_path / "replies.json"
    plain.write_text(json.dumps(["Thought: one"]))
    assert not resolve_model(f"scripted:{plain}").fim  # the list format is as before: chat only

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"replies": [], "infills": [{"logprob": -1}]}))
    with pytest.raises(ModelError, match="each infill must be a string"):
        resolve_model(f"scripted:{bad}")


# --- live: the embedded Qwen2.5-Coder ------------------------------------------------------------------------------


@pytest.mark.live
def test_live_embedded_model_fills_the_line_and_reuses_the_cached_prefix():
    from pyharness.models.llamacpp import LlamaCppModel

    model = LlamaCppModel(live_pack(), name="llamacpp:qwen2.5-coder-1.5b")
    assert model.fim
    started = time.monotonic()
    greedy = model.infill(PREFIX, SUFFIX, InfillOptions())
    first_seconds = time.monotonic() - started
    assert "return" in greedy.text and "\n" not in greedy.text, greedy
    assert greedy.logprob is not None and -2.0 < greedy.logprob <= 0.0, greedy  # greedy on an easy line: likely

    sample = model.infill(PREFIX, SUFFIX, InfillOptions(temperature=0.8, seed=1))  # the next sample of the same hole
    assert sample.cached_tokens >= sample.prompt_tokens - 2, sample
    other = model.infill(PREFIX, "\n\nprint(add(2, 3))\n", InfillOptions())  # same prefix, another suffix
    assert other.cached_tokens >= model.count_tokens(PREFIX) + 1, other
    print(f"\ninfill: first {first_seconds:.2f} s (load included), {greedy.seconds:.2f} s infill, {greedy}\n"
          f"sample: {sample}\nother suffix: {other}")
