"""The openai: backend against a local fake OpenAI-compatible server (tests/fake_openai.py)."""

import socket
import subprocess
import sys
import time

import pytest
from fake_openai import FakeOpenAI, delta
from runkit import LOOP_LAYERS
from typer.testing import CliRunner

from pyharness.cli.main import app
from pyharness.errors import ModelError
from pyharness.loop.transcript import latest_runs, read_transcript
from pyharness.models.base import ChatOptions
from pyharness.models.openai import OpenAIModel, parse_openai_spec
from pyharness.models.resolve import resolve_model
from pyharness.models.retry import chat_with_retries

MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say hello."}]
STOPS = ["\nObservation:", "\nThought:", "<|im_end|>", "<|endoftext|>", "\nUser:"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def model_at(server: FakeOpenAI, name: str = "fake", **kwargs) -> OpenAIModel:
    return OpenAIModel(name, server.url, **kwargs)


def test_module_import_does_not_load_the_client():
    code = "import sys, pyharness.models.resolve, pyharness.models.openai; print('openai' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]


def test_streamed_reply_assembles_text_and_counts():
    with FakeOpenAI(lambda ex: ex.reply("Hello there.", counts={"prompt": 30, "completion": 4, "cached": 24})) as s:
        seen: list[str] = []
        reply = model_at(s).chat(MESSAGES, ChatOptions(on_text=seen.append))
    assert reply.text == "Hello there."
    assert "".join(seen) == "Hello there." and len(seen) == 3  # streamed piece by piece
    assert (reply.prompt_tokens, reply.cached_tokens, reply.completion_tokens) == (30, 24, 4)
    assert reply.finish_reason == "stop" and not reply.stopped_early


def test_request_carries_sampling_limits_stops_and_no_key_by_default():
    with FakeOpenAI(lambda ex: ex.reply("ok")) as s:
        model_at(s).chat(MESSAGES, ChatOptions(stop=STOPS, max_tokens=99, temperature=0.7, seed=3))
        sent, headers = s.requests[0], s.headers[0]
    assert sent["model"] == "fake" and sent["messages"] == MESSAGES and sent["stream"] is True
    assert (sent["max_tokens"], sent["temperature"], sent["seed"]) == (99, 0.7, 3)
    assert sent["stop"] == STOPS[:4]  # OpenAI's API takes four; the fifth is applied on this side
    assert sent["stream_options"] == {"include_usage": True}
    assert headers["authorization"] == "Bearer not-needed"


def test_a_reply_schema_goes_as_response_format_and_is_absent_otherwise():
    schema = {"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]}
    with FakeOpenAI(lambda ex: ex.reply('{"action": "done"}')) as s:
        model_at(s).chat(MESSAGES, ChatOptions(schema=schema))
        model_at(s).chat(MESSAGES, ChatOptions())
    assert s.requests[0]["response_format"] == {"type": "json_schema",
                                                "json_schema": {"name": "action", "schema": schema}}
    assert "response_format" not in s.requests[1]


def test_the_key_comes_from_openai_api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-123")
    with FakeOpenAI(lambda ex: ex.reply("ok")) as s:
        model_at(s).chat(MESSAGES, ChatOptions())
        assert s.headers[0]["authorization"] == "Bearer sk-local-123"


def test_a_stop_sequence_the_server_ignores_is_applied_here():
    text = 'Action: read {"path": "a.py"}\nUser: more\nObservation: fake'
    with FakeOpenAI(lambda ex: ex.reply(text, pieces=8)) as s:
        seen: list[str] = []
        reply = model_at(s).chat(MESSAGES, ChatOptions(stop=STOPS, on_text=seen.append))
    assert reply.text == 'Action: read {"path": "a.py"}'  # cut at "\nUser:", the stop the server was not sent
    assert "".join(seen) == reply.text
    assert reply.finish_reason == "stop"


def test_cut_off_reply_reports_length():
    with FakeOpenAI(lambda ex: ex.reply("Hel", finish="length")) as s:
        assert model_at(s).chat(MESSAGES, ChatOptions()).finish_reason == "length"


def test_should_stop_ends_the_reply_at_a_line_end():
    with FakeOpenAI(lambda ex: ex.reply("Action: done {}\nmore rambling\n", pieces=6)) as s:
        reply = model_at(s).chat(MESSAGES, ChatOptions(should_stop=lambda text: "Action:" in text and "\n" in text))
    assert reply.stopped_early and reply.text.startswith("Action: done {}\n") and "rambling" not in reply.text
    assert reply.completion_tokens > 0  # estimated: the server's counts never came


def test_without_usage_the_counts_are_estimated():
    with FakeOpenAI(lambda ex: ex.reply("Hello there.", counts={})) as s:
        reply = model_at(s).chat(MESSAGES, ChatOptions())
    assert reply.prompt_tokens > 0 and reply.completion_tokens == len("Hello there.") // 3 + 1


def test_prefix_goes_as_a_final_assistant_message_and_starts_the_text():
    with FakeOpenAI(lambda ex: ex.reply("x = 1\n```")) as s:
        model = model_at(s, prefill=True)
        reply = model.chat(MESSAGES, ChatOptions(prefix="```python\n"))
        assert s.requests[0]["messages"][-1] == {"role": "assistant", "content": "```python\n"}
    assert reply.text == "```python\nx = 1\n```"
    assert OpenAIModel("m", "http://127.0.0.1:1/v1").prefill is False  # off unless the server is known to continue


def test_connection_refused_is_one_line_with_both_ways_on():
    url = f"http://127.0.0.1:{free_port()}/v1"
    for call in (lambda m: m.chat(MESSAGES, ChatOptions()), lambda m: m.check()):
        with pytest.raises(ModelError) as info:
            call(OpenAIModel("fake", url))
        message = str(info.value)
        assert message.startswith(f"no server at {url} (connection refused): start it")
        assert "--model llamacpp:qwen2.5-coder-1.5b" in message and "\n" not in message
        assert info.value.transient is False


def test_a_404_for_the_model_lists_the_models_the_server_has():
    not_found = {"error": {"message": "The model `gpt-x` does not exist.", "type": "NotFoundError", "code": 404}}
    with FakeOpenAI(lambda ex: ex.status(404, not_found), models=("qwen2.5-coder-7b", "llama3.1:8b")) as s:
        with pytest.raises(ModelError) as info:
            model_at(s, "gpt-x").chat(MESSAGES, ChatOptions())
    assert str(info.value) == (f"the server at {s.url} has no model 'gpt-x' (it has: llama3.1:8b, qwen2.5-coder-7b): "
                               f"name one with --model openai:NAME@{s.url}")


def test_a_url_without_the_api_says_where_it_usually_is():
    with FakeOpenAI(lambda ex: ex.status(404, {}), models=None) as s:
        root = s.url.removesuffix("/v1")
        for call in (lambda m: m.chat(MESSAGES, ChatOptions()), lambda m: m.check()):
            with pytest.raises(ModelError, match=r"no OpenAI-compatible API at .* \(HTTP 404 on /models\): the URL "
                               "usually ends in /v1"):
                call(OpenAIModel("fake", root))


def test_a_server_error_is_one_line_and_may_be_retried():
    with FakeOpenAI(lambda ex: ex.status(500, {"error": {"message": "out of memory\nstack..."}})) as s:
        with pytest.raises(ModelError) as info:
            model_at(s).chat(MESSAGES, ChatOptions())
    assert str(info.value) == (f"the server at {s.url} refused the request (HTTP 500: out of memory): check its log, "
                               "or try a smaller model")
    assert info.value.transient is True


def test_a_refused_key_says_to_set_it():
    with FakeOpenAI(lambda ex: ex.status(401, {"error": {"message": "bad key"}})) as s:
        with pytest.raises(ModelError, match=r"refused the key \(HTTP 401\): set OPENAI_API_KEY"):
            model_at(s).chat(MESSAGES, ChatOptions())


def test_an_error_event_mid_stream_is_reported_and_retried():
    calls = []

    def chat(ex):
        calls.append(1)
        if len(calls) <= 2:  # the first call below, and the first try of the retried one
            ex.event(delta("Hel"))
            ex.event({"error": {"message": "model runner crashed", "type": "server_error"}})
        else:
            ex.reply("Hello.")

    with FakeOpenAI(chat) as s:
        seen: list[str] = []
        with pytest.raises(ModelError) as info:
            model_at(s).chat(MESSAGES, ChatOptions(on_text=seen.append))
        assert str(info.value).startswith(f"the server at {s.url} failed mid-reply: model runner crashed")
        assert info.value.transient and seen == ["Hel"]
        waits: list[float] = []
        reply = chat_with_retries(model_at(s), MESSAGES, ChatOptions(), backoff=0.5, sleep=waits.append)
    assert reply.text == "Hello." and waits == [0.5] and len(calls) == 3


def test_a_stream_without_a_finish_reason_is_reported():
    with FakeOpenAI(lambda ex: (ex.event(delta("a")), ex.event("[DONE]"))) as s:
        with pytest.raises(ModelError, match="ended the reply before finishing") as info:
            model_at(s).chat(MESSAGES, ChatOptions())
    assert info.value.transient


def test_an_unreadable_event_is_reported():
    with FakeOpenAI(lambda ex: (ex.event(delta("a")), ex.event("<html>proxy error</html>"))) as s:
        with pytest.raises(ModelError, match="sent an unreadable reply"):
            model_at(s).chat(MESSAGES, ChatOptions())


def test_silence_before_the_first_token_ends_at_its_timeout():
    with FakeOpenAI(lambda ex: (time.sleep(1.5), ex.reply("late"))) as s:
        started = time.monotonic()
        with pytest.raises(ModelError) as info:
            model_at(s, first_token_seconds=0.5).chat(MESSAGES, ChatOptions())
        assert time.monotonic() - started < 1.4
    assert str(info.value).startswith(f"the server at {s.url} sent nothing for 0.5 s")


def test_a_stall_mid_stream_ends_at_the_idle_timeout():
    def chat(ex):
        ex.event(delta("Hel"))
        time.sleep(2)
        ex.reply("lo")

    with FakeOpenAI(chat) as s:
        seen: list[str] = []
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"sent nothing for 0\.5 s") as info:
            model_at(s, stall_seconds=0.5).chat(MESSAGES, ChatOptions(on_text=seen.append))
        assert time.monotonic() - started < 1.5
    assert seen == ["Hel"] and info.value.transient is False


def test_an_endless_reply_ends_at_the_total_timeout():
    def chat(ex):
        for _ in range(30):
            ex.event(delta("still going "))
            time.sleep(0.1)

    with FakeOpenAI(chat) as s:
        started = time.monotonic()
        with pytest.raises(ModelError, match=r"took over 1 s, the limit of one reply"):
            model_at(s, stall_seconds=0.5, total_seconds=1).chat(MESSAGES, ChatOptions())
    assert 0.9 < time.monotonic() - started < 1.8


def test_check_passes_a_listed_model_and_lists_the_others_for_a_missing_one():
    with FakeOpenAI(lambda ex: ex.reply("ok"), models=("a", "llama3.1:latest")) as s:
        model_at(s, "a").check()
        model_at(s, "llama3.1").check()  # a bare name matches its :latest tag, as Ollama's /v1 lists them
        with pytest.raises(ModelError) as info:
            model_at(s, "b").check()
        assert str(info.value).startswith(f"the server at {s.url} has no model 'b' (it has: a, llama3.1:latest)")
        assert s.requests == []  # said before any chat request


def test_check_lets_llama_server_answer_with_its_one_model_whatever_the_name():
    with FakeOpenAI(lambda ex: ex.reply("ok"), models=("/models/qwen.gguf",), owned_by="llamacpp") as s:
        model_at(s, "qwen").check()


@pytest.mark.parametrize(("rest", "expected"), [
    ("qwen@http://127.0.0.1:8080/v1", ("qwen", "http://127.0.0.1:8080/v1")),
    ("Qwen/Qwen2.5-Coder-7B-Instruct@https://gpu.example:8000/v1", ("Qwen/Qwen2.5-Coder-7B-Instruct",
                                                                   "https://gpu.example:8000/v1")),
    ("llama3.1:8b", ("llama3.1:8b", None)),
])
def test_spec_parsing(rest, expected):
    assert parse_openai_spec(rest) == expected


@pytest.mark.parametrize(("rest", "message"), [
    ("", "openai needs a model name"), ("@http://h/v1", "openai needs a model name"),
    ("m@localhost:8000", "the part after @ must be a URL"),
])
def test_bad_specs_are_one_line_errors(rest, message):
    with pytest.raises(ModelError, match=message):
        parse_openai_spec(rest)


def test_base_url_defaults_to_openai_base_url_then_localhost(monkeypatch):
    assert resolve_model("openai:m").name == "openai:m@http://localhost:8000/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:1234/v1/")
    assert resolve_model("openai:m").name == "openai:m@http://127.0.0.1:1234/v1"
    assert resolve_model("openai:m@http://10.0.0.2:80/v1").base_url == "http://10.0.0.2:80/v1"


ANSWER = 'Action: answer {"text": "orders/tax.py:9 sets the books rate to 0.05"}'
FIX_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
            "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")


def scripted_server(replies: list[str], **kwargs) -> FakeOpenAI:
    queue = list(replies)
    return FakeOpenAI(lambda ex: ex.reply(queue.pop(0) if queue else "Action: done {}"), **kwargs)


def test_ph_ask_end_to_end_through_an_openai_server(orders):
    repo = orders("ask")
    with scripted_server(['Action: read {"path": "orders/tax.py"}', ANSWER]) as s:
        done = CliRunner().invoke(app, ["ask", "Which rate applies to books?", "--repo", str(repo),
                                        "--model", f"openai:fake@{s.url}"])
        asked = len(s.requests)
    assert done.exit_code == 0, done.output
    assert "orders/tax.py:9 sets the books rate to 0.05" in done.stdout
    assert asked == 2
    start = read_transcript(latest_runs(repo, 1)[0])[0]
    assert start["model"] == f"openai:fake@{s.url}"


def test_ph_fix_end_to_end_through_an_openai_server(orders):
    repo = orders("fix")
    with scripted_server([FIX_EDIT]) as s:
        done = CliRunner().invoke(app, ["fix", "--repo", str(repo), "--model", f"openai:fake@{s.url}",
                                        "--layers", LOOP_LAYERS])
        first = s.requests[0] if s.requests else {}
    assert done.exit_code == 0, done.output
    assert "if line.quantity >= BULK_THRESHOLD:" in (repo / "orders/pricing.py").read_text()
    assert first["messages"][0]["role"] == "system" and "\nObservation:" in first["stop"]
    end = read_transcript(latest_runs(repo, 1)[0])[-1]
    assert end["outcome"] == "done" and end["prompt_tokens"] >= 12  # the server's counts reached the transcript


def test_ph_ask_with_the_model_missing_stops_before_any_chat(orders):
    repo = orders("ask")
    with scripted_server([ANSWER], models=("other",)) as s:
        done = CliRunner().invoke(app, ["ask", "what?", "--repo", str(repo), "--model", f"openai:fake@{s.url}"])
        assert s.requests == []
    assert done.exit_code == 1
    assert f"ph: the server at {s.url} has no model 'fake' (it has: other)" in done.output
    assert not (repo / ".ph" / "runs").exists() or not list((repo / ".ph" / "runs").iterdir())

