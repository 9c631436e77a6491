"""The Ollama backend against a local HTTP server speaking the Ollama chat API."""

import json
import socket
import subprocess
import sys
import time

import pytest
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from pyharness.errors import ModelError
from pyharness.models.base import ChatOptions
from pyharness.models.ollama import OllamaModel

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}]


def ndjson(*lines: dict) -> str:
    return "".join(json.dumps(line) + "\n" for line in lines)


def piece(text: str) -> dict:
    return {
        "model": "llama3.1:8b",
        "created_at": "2025-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": text},
        "done": False,
    }


def final(done_reason: str = "stop", prompt: int = 12, completion: int = 5) -> dict:
    return {
        "model": "llama3.1:8b",
        "created_at": "2025-01-01T00:00:01Z",
        "message": {"role": "assistant", "content": ""},
        "done": True,
        "done_reason": done_reason,
        "total_duration": 1000,
        "prompt_eval_count": prompt,
        "eval_count": completion,
    }


def model_at(httpserver, **kwargs) -> OllamaModel:
    return OllamaModel("llama3.1:8b", host=httpserver.url_for("/").rstrip("/"), **kwargs)


@pytest.fixture
def slow_server():
    """A threaded server, so a handler still sleeping after the client gave up does not hold up the next test."""
    server = HTTPServer(threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_module_import_does_not_load_ollama():
    code = "import sys, pyharness.models.ollama; print('ollama' in sys.modules, 'httpx' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_streamed_chat_assembles_text_and_counts(httpserver):
    body = ndjson(piece("Hel"), piece("lo"), piece(" there."), final(prompt=12, completion=5))
    httpserver.expect_request("/api/chat", method="POST").respond_with_data(body, content_type="application/x-ndjson")
    seen: list[str] = []

    reply = model_at(httpserver).chat(MESSAGES, ChatOptions(on_text=seen.append))

    assert reply.text == "Hello there."
    assert seen == ["Hel", "lo", " there."]
    assert (reply.prompt_tokens, reply.completion_tokens, reply.cached_tokens) == (12, 5, 0)
    assert reply.finish_reason == "stop"
    assert reply.seconds > 0


def test_request_carries_num_ctx_temperature_seed_and_stop(httpserver):
    httpserver.expect_request("/api/chat", method="POST").respond_with_data(ndjson(piece("ok"), final()))
    model = model_at(httpserver)

    model.chat(MESSAGES, ChatOptions(stop=["</action>"], max_tokens=300, temperature=0.0, seed=7))

    sent = httpserver.log[-1][0].get_json()
    assert sent["model"] == "llama3.1:8b"
    assert sent["stream"] is True
    assert sent["messages"] == MESSAGES
    opts = sent["options"]
    assert opts["num_ctx"] == 2048  # a small prompt still gets the floor
    assert (opts["temperature"], opts["seed"], opts["stop"], opts["num_predict"]) == (0.0, 7, ["</action>"], 300)
    assert model.name == "ollama:llama3.1:8b"


def test_num_ctx_grows_with_the_prompt_but_stays_in_the_window():
    model = OllamaModel(context_window=8192)
    assert (
        model.num_ctx_for([{"role": "user", "content": "x" * 9000}], 768) == 4096
    )  # 3000 + 768 + 256 = 4024, rounded up
    assert model.num_ctx_for([{"role": "user", "content": "x" * 90000}], 768) == 8192
    # Never shrinks: a smaller num_ctx would make Ollama reload the model.
    assert model.num_ctx_for([{"role": "user", "content": "hi"}], 768) == 8192
    assert OllamaModel(context_window=8192).count_tokens("abcdef") == 3


def test_cut_off_reply_reports_length(httpserver):
    httpserver.expect_request("/api/chat").respond_with_data(ndjson(piece("partial"), final(done_reason="length")))
    reply = model_at(httpserver).chat(MESSAGES, ChatOptions(max_tokens=1))
    assert (reply.text, reply.finish_reason) == ("partial", "length")


def test_connection_refused_says_to_start_ollama():
    host = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(ModelError) as info:
        OllamaModel(host=host).chat(MESSAGES, ChatOptions())
    message = str(info.value)
    assert f"Ollama not reachable at {host} — is `ollama serve` running? (connection refused" in message
    assert "--model llamacpp:qwen2.5-coder-1.5b" in message
    assert "\n" not in message


def test_missing_model_says_to_pull_it(httpserver):
    httpserver.expect_request("/api/chat").respond_with_json({"error": "model 'x' not found"}, status=404)
    with pytest.raises(ModelError) as info:
        OllamaModel("x", host=httpserver.url_for("/")).chat(MESSAGES, ChatOptions())
    assert str(info.value) == "Ollama has no model 'x': run `ollama pull x`"


def test_server_error_status_is_one_line(httpserver):
    httpserver.expect_request("/api/chat").respond_with_json({"error": "out of memory"}, status=500)
    with pytest.raises(ModelError) as info:
        model_at(httpserver).chat(MESSAGES, ChatOptions())
    assert "HTTP 500: out of memory" in str(info.value)


def test_error_line_mid_stream_is_reported(httpserver):
    body = ndjson(piece("Hel"), {"error": "something broke"})
    httpserver.expect_request("/api/chat").respond_with_data(body)
    seen: list[str] = []
    with pytest.raises(ModelError) as info:
        model_at(httpserver).chat(MESSAGES, ChatOptions(on_text=seen.append))
    assert str(info.value).startswith("Ollama failed mid-reply: something broke")
    assert seen == ["Hel"]


def test_unreadable_line_is_reported(httpserver):
    httpserver.expect_request("/api/chat").respond_with_data(ndjson(piece("a")) + "<html>proxy error</html>\n")
    with pytest.raises(ModelError, match="unreadable reply"):
        model_at(httpserver).chat(MESSAGES, ChatOptions())


def test_stream_without_final_chunk_is_reported(httpserver):
    httpserver.expect_request("/api/chat").respond_with_data(ndjson(piece("a")))
    with pytest.raises(ModelError, match="ended the reply before finishing"):
        model_at(httpserver).chat(MESSAGES, ChatOptions())


def test_stall_before_answer_is_reported_quickly(slow_server):
    def slow(request: Request) -> Response:
        time.sleep(1.5)
        return Response(ndjson(piece("late"), final()))

    slow_server.expect_request("/api/chat").respond_with_handler(slow)
    started = time.monotonic()
    with pytest.raises(ModelError) as info:
        model_at(slow_server, first_token_seconds=0.5).chat(MESSAGES, ChatOptions())
    assert time.monotonic() - started < 1.4
    assert str(info.value).startswith("Ollama sent nothing for 0.5 s")


def test_stall_mid_stream_is_reported(slow_server):
    def trickle(request: Request) -> Response:
        def body():
            yield ndjson(piece("Hel"))
            time.sleep(1.5)
            yield ndjson(final())

        return Response(body())

    slow_server.expect_request("/api/chat").respond_with_handler(trickle)
    seen: list[str] = []
    started = time.monotonic()
    with pytest.raises(ModelError, match=r"Ollama sent nothing for 0\.5 s"):
        model_at(slow_server, stall_seconds=0.5).chat(MESSAGES, ChatOptions(on_text=seen.append))
    assert time.monotonic() - started < 1.4
    assert seen == ["Hel"]


def tags(*names: str) -> dict:
    return {
        "models": [
            {"name": n, "model": n, "modified_at": "2025-01-01T00:00:00Z", "size": 1, "digest": "d"} for n in names
        ]
    }


def test_available_when_the_model_is_listed(httpserver):
    httpserver.expect_request("/api/tags", method="GET").respond_with_json(tags("qwen3:4b", "llama3.1:8b"))
    assert model_at(httpserver).available() is True


def test_bare_name_matches_latest_tag(httpserver):
    httpserver.expect_request("/api/tags", method="GET").respond_with_json(tags("mistral:latest"))
    assert OllamaModel("mistral", host=httpserver.url_for("/")).available() is True


def test_not_available_when_the_model_is_missing(httpserver):
    httpserver.expect_request("/api/tags", method="GET").respond_with_json(tags("qwen3:4b"))
    assert model_at(httpserver).available() is False


def test_not_available_when_nothing_listens():
    assert OllamaModel(host=f"http://127.0.0.1:{free_port()}").available() is False


def test_not_available_when_the_server_answers_garbage(httpserver):
    httpserver.expect_request("/api/tags").respond_with_data("not json", status=200)
    assert model_at(httpserver).available() is False
    httpserver.clear()
    httpserver.expect_request("/api/tags").respond_with_data("oops", status=500)
    assert model_at(httpserver).available() is False


def test_host_defaults_to_env(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "http://10.0.0.5:11434")
    assert OllamaModel().host == "http://10.0.0.5:11434"
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaModel().host == "http://127.0.0.1:11434"


def test_prefill_sends_the_started_reply_as_a_final_assistant_message(httpserver):
    httpserver.expect_request("/api/chat", method="POST").respond_with_data(
        ndjson(piece("print(1)\n"), piece("```"), final(completion=4))
    )
    prefix = 'Action: write {"path": "main.py"}\n```python\n'
    seen_stop: list[str] = []
    model = model_at(httpserver)
    reply = model.chat(MESSAGES, ChatOptions(prefix=prefix, should_stop=lambda text: seen_stop.append(text) or False))
    sent = httpserver.log[-1][0].get_json()
    assert sent["messages"] == [*MESSAGES, {"role": "assistant", "content": prefix}]
    assert reply.text == prefix + "print(1)\n```"
    assert seen_stop == [prefix + "print(1)\n"]  # the stop check sees the whole reply so far
    assert model.prefill is True
