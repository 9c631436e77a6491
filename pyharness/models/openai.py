"""The `openai:MODEL[@URL]` backend: any server that speaks the OpenAI chat API (llama.cpp's llama-server, vLLM,
LM Studio, Ollama's /v1), through the official `openai` client.

Prefill (`ChatOptions.prefix`) is off by default: servers differ on a final assistant message (llama-server and
Ollama continue it, vLLM needs its own `continue_final_message` flag, OpenAI's API answers it as a new turn), so
the loop falls back to one more turn instead. `OpenAIModel(prefill=True)` sends it, for a server known to continue.
"""

import os
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from pyharness.errors import InfillUnsupported, ModelError
from pyharness.models.base import ChatOptions, Infill, InfillOptions, Model, Reply
from pyharness.models.ollama import EMBEDDED_HINT, has_models
from pyharness.models.streaming import StreamLimits, first_stop, longest_stop, read_stream, timed

DEFAULT_BASE_URL = "http://localhost:8000/v1"
SERVER_STOPS = 4
"""Stop sequences sent to the server (OpenAI's API takes at most 4); all of them are also applied here."""
AVAILABLE_TIMEOUT = 5.0
CONNECT_TIMEOUT = 10.0
NO_KEY = "not-needed"
"""Sent when OPENAI_API_KEY is unset: the client insists on a key, local servers ignore it."""


def parse_openai_spec(rest: str) -> tuple[str, str | None]:
    """`MODEL@http://host:port/v1` or `MODEL` into (model, base URL or None); a one-line `ModelError` otherwise."""
    model, at, url = rest.rpartition("@")
    if not at:
        model, url = rest, ""
    elif not url.startswith(("http://", "https://")):
        raise ModelError(f"openai:{rest}: the part after @ must be a URL, e.g. openai:{model or 'MODEL'}"
                         "@http://127.0.0.1:8080/v1")
    if not model:
        raise ModelError("openai needs a model name: --model openai:MODEL or openai:MODEL@http://host:port/v1")
    return model, url or None


class OpenAIModel(Model):
    """A chat model behind an OpenAI-compatible server; every failure becomes a one-line `ModelError`."""

    def __init__(
        self,
        model: str,
        base_url: str | None = None,
        *,
        api_key: str | None = None,
        context_window: int = 8192,
        stall_seconds: float = 120.0,
        first_token_seconds: float = 600.0,
        total_seconds: float = 1800.0,
        prefill: bool = False,
    ):
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        self.name = f"openai:{model}@{self.base_url}"
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.context_window = context_window
        self.limits = StreamLimits(first_token_seconds, stall_seconds, total_seconds)
        self.prefill = prefill
        self.fim = True
        """Not known until asked: `/v1/completions` with a `suffix` is tried, and a server that turns it down (vLLM,
        llama-server, a chat-only API) sets this False."""
        self._client: Any = None

    def chat(self, messages: list[dict], options: ChatOptions) -> Reply:
        """Stream one reply; pieces go to `options.on_text` as they arrive."""
        started = time.monotonic()
        request: dict[str, Any] = dict(
            model=self.model,
            messages=[*messages, {"role": "assistant", "content": options.prefix}] if options.prefix else messages,
            stream=True,
            stream_options={"include_usage": True},
            temperature=options.temperature,
            seed=options.seed,
            max_tokens=options.max_tokens,
        )
        if options.stop:
            request["stop"] = options.stop[:SERVER_STOPS]
        if options.schema is not None:  # llama-server, vLLM and LM Studio take a JSON schema here
            request["response_format"] = {"type": "json_schema",
                                          "json_schema": {"name": "action", "schema": options.schema}}
        usage: Any = None

        def pieces() -> Iterator[tuple[str, str | None]]:
            nonlocal usage
            for chunk in self._timed(request, started):
                usage = getattr(chunk, "usage", None) or usage
                for choice in chunk.choices or []:
                    yield (choice.delta.content if choice.delta else None) or "", choice.finish_reason

        with closing(pieces()) as stream:
            read = read_stream(stream, options, options.stop)  # the stops past SERVER_STOPS are applied here
        if read.finish is None and not read.ended_here:
            raise ModelError(f"the server at {self.base_url} ended the reply before finishing: check that it is "
                             "still running", transient=True)
        written = read.text[len(options.prefix):]
        counted = usage is not None and not read.ended_here
        return Reply(
            text=read.text,
            prompt_tokens=usage.prompt_tokens if counted else self.count_tokens(str(messages)),
            cached_tokens=_cached(usage) if counted else 0,
            completion_tokens=usage.completion_tokens if counted else self.count_tokens(written),
            finish_reason="length" if read.finish == "length" and not read.ended_here else "stop",
            stopped_early=read.early,
            seconds=time.monotonic() - started,
        )

    def infill(self, prefix: str, suffix: str, options: InfillOptions) -> Infill:
        """`/v1/completions` with `prompt` and `suffix` (Ollama's /v1 takes it); token log-probabilities when the
        server gives them."""
        if not self.fim:
            raise InfillUnsupported(f"the server at {self.base_url} took no suffix on /v1/completions before; frame "
                                    "the hole as a chat turn instead")
        started = time.monotonic()
        request: dict[str, Any] = dict(
            model=self.model,
            prompt=prefix,
            suffix=suffix or "\n",  # an empty suffix reads as "no suffix": a plain continuation
            stream=True,
            stream_options={"include_usage": True},
            temperature=options.temperature,
            seed=options.seed,
            max_tokens=options.max_tokens,
            logprobs=1,
        )
        if options.stop:
            request["stop"] = options.stop[:SERVER_STOPS]
        text, logprobs, usage = "", [], None
        finish: str | None = None
        try:
            for chunk in self._timed(request, started, api="completions"):
                usage = getattr(chunk, "usage", None) or usage
                for choice in chunk.choices or []:
                    before = len(text)
                    text += choice.text or ""
                    given = getattr(choice.logprobs, "token_logprobs", None) or []
                    logprobs.extend(float(lp) for lp in given if lp is not None)
                    cut = first_stop(text, options.stop, before - longest_stop(options.stop))
                    if cut is not None:  # a server that ignores stop, or a fifth stop sequence
                        text, finish = text[:cut], "stop_here"
                        break
                    if choice.finish_reason:
                        finish = choice.finish_reason
                if finish == "stop_here":
                    break
        except ModelError as err:
            if self._refuses_infill(err.__cause__):
                self.fim = False
                said = _server_says(err.__cause__)
                raise InfillUnsupported(f"the server at {self.base_url} takes no suffix on /v1/completions ({said}); "
                                        "frame the hole as a chat turn instead") from None
            raise
        if finish is None:
            raise ModelError(f"the server at {self.base_url} ended the infill before finishing: check that it is "
                             "still running", transient=True)
        counted = usage is not None and finish != "stop_here"
        return Infill(
            text=text,
            prompt_tokens=usage.prompt_tokens if counted else self.count_tokens(prefix + suffix),
            cached_tokens=_cached(usage) if counted else 0,
            completion_tokens=usage.completion_tokens if counted else self.count_tokens(text),
            seconds=time.monotonic() - started,
            logprob=sum(logprobs) / len(logprobs) if logprobs else None,
            finish_reason="length" if finish == "length" else "stop",
        )

    def _refuses_infill(self, cause: object) -> bool:
        """True when the server's error says it takes no suffix or no text completions (vLLM: "suffix is not
        currently supported"; llama-server: "Unsupported param: suffix"; OpenAI: "Unrecognized request argument
        supplied: suffix"), or it has no /v1/completions although it serves the model."""
        import openai

        if not isinstance(cause, openai.APIStatusError):
            return False
        said = _server_says(cause).lower()
        if ("suffix" in said or "completion" in said) and any(
            word in said for word in ("support", "unrecognized", "not permitted", "not allowed", "extra")
        ):
            return True
        if cause.status_code == 404:
            try:
                ids, serves_any = self._models()
            except ModelError:
                return False
            return serves_any or _has(ids or [], self.model)
        return False

    def count_tokens(self, text: str) -> int:
        """An estimate (about 3 characters a token); the chat API has no tokenize endpoint."""
        return len(text) // 3 + 1

    def listed(self) -> list[str] | None:
        """The model ids the server lists, or None when it does not answer or has no listing; never raises."""
        try:
            return self._models()[0]
        except ModelError:
            return None

    def check(self) -> None:
        """Before a run touches anything: a `ModelError` when the server is not there or lacks the model."""
        ids, serves_any = self._models(strict=True)
        if ids is not None and not serves_any and not _has(ids, self.model):
            raise ModelError(self._missing(ids))

    def _models(self, strict: bool = False) -> tuple[list[str] | None, bool]:
        """The listed model ids (None for an odd answer, unless `strict`), and whether the server answers with its
        one loaded model whatever the name (llama-server, which marks its models `owned_by: llamacpp`)."""
        import openai

        client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=AVAILABLE_TIMEOUT)
        try:
            page = client.models.list()
            models = list(page.data)
        except openai.APIConnectionError as err:  # includes APITimeoutError
            raise ModelError(self._unreachable(err)) from None
        except openai.APIStatusError as err:
            if err.status_code == 404:
                raise ModelError(f"no OpenAI-compatible API at {self.base_url} (HTTP 404 on /models): the URL "
                                 "usually ends in /v1, e.g. openai:MODEL@http://127.0.0.1:8080/v1") from None
            if err.status_code in (401, 403):
                raise ModelError(self._refused_key(err)) from None
            if strict:
                return None, False  # an odd answer to the listing: the chat request reports what is wrong
            raise ModelError(self._status(err)) from None
        except (openai.APIError, ValueError) as err:
            if strict:
                return None, False
            raise ModelError(
                f"the server at {self.base_url} listed its models unreadably ({_first_line(err)})"
            ) from None
        ids = sorted(str(m.id) for m in models if getattr(m, "id", None))
        return ids, any(getattr(m, "owned_by", None) == "llamacpp" for m in models)

    def _get_client(self) -> Any:
        if self._client is None:
            import openai

            # the client's read timeout is only the backstop; first-token, idle and total timeouts are kept by _timed,
            # and retries by models/retry.py (so the client's own are off).
            read = max(self.limits.first_token_seconds, self.limits.stall_seconds)
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0,
                                         timeout=openai.Timeout(read, connect=CONNECT_TIMEOUT))
        return self._client

    def _timed(self, request: dict, started: float, api: str = "chat") -> Iterator[Any]:
        """The streamed chunks of `/v1/chat/completions`, or of `/v1/completions` for `api="completions"`."""
        return timed(
            lambda: self._chunks(request, api),
            started,
            self.limits,
            name="openai-stream",
            silent=lambda wait: f"the server at {self.base_url} sent nothing for {wait:g} s: the model may be too "
            "big for this machine; check the server's log, or try a smaller model",
            too_long=f"the reply from {self.base_url} took over {self.limits.total_seconds:g} s, the limit of one "
            "reply: the model may be looping; try again, or a smaller model",
        )

    def _chunks(self, request: dict, api: str = "chat") -> Iterator[Any]:
        """The streamed chunks, with every transport or server failure turned into a `ModelError`."""
        import openai

        started = False
        try:
            client = self._get_client()
            stream = (client.completions if api == "completions" else client.chat.completions).create(**request)
            try:
                for chunk in stream:
                    started = True
                    yield chunk
            finally:
                stream.close()  # also when the reader stops early: the server stops generating
        except openai.APIStatusError as err:
            if err.status_code == 404:
                raise ModelError(self._not_found()) from err
            if err.status_code in (401, 403):
                raise ModelError(self._refused_key(err)) from err
            raise ModelError(self._status(err), transient=err.status_code in (408, 429) or err.status_code >= 500) \
                from err
        except openai.APITimeoutError as err:
            wait = max(self.limits.first_token_seconds, self.limits.stall_seconds)
            raise ModelError(f"the server at {self.base_url} sent nothing for {wait:g} s: check the server's log, "
                             "or try a smaller model") from err
        except openai.APIConnectionError as err:
            if started:
                raise ModelError(f"the server at {self.base_url} dropped the connection mid-reply: check that it is "
                                 "still running", transient=True) from err
            raise ModelError(self._unreachable(err)) from err
        except openai.APIError as err:  # an {"error": ...} event after HTTP 200
            raise ModelError(f"the server at {self.base_url} failed mid-reply: {_first_line(err.message)}: check its "
                             "log, then try again", transient=True) from err
        except _transport_errors() as err:  # older clients let the transport's own errors through mid-stream
            raise ModelError(f"the server at {self.base_url} dropped the connection mid-reply ({_first_line(err)}): "
                             "check that it is still running", transient=True) from err
        except ValueError as err:
            raise ModelError(f"the server at {self.base_url} sent an unreadable reply ({_first_line(err)}): check "
                             "that the URL points at an OpenAI-compatible API") from err

    def _unreachable(self, err: BaseException) -> str:
        causes, cause = [], err
        while cause is not None and len(causes) < 6:  # the client wraps the transport's error, which names the reason
            causes.append(str(cause).lower())
            cause = cause.__cause__ or cause.__context__
        reason = ("connection refused" if any("refused" in c for c in causes)
                  else "timed out" if any("timed out" in c or "timeout" in c for c in causes) else "no connection")
        return (f"no server at {self.base_url} ({reason}): start it (e.g. `llama-server -m MODEL.gguf --port 8080`) "
                f"or fix the URL in --model openai:MODEL@URL; or {EMBEDDED_HINT}")

    def _not_found(self) -> str:
        try:
            ids, _ = self._models()
        except ModelError as err:
            return str(err)  # the listing is missing too: most likely a wrong URL
        return self._missing(ids or [])

    def _missing(self, ids: list[str]) -> str:
        return (f"the server at {self.base_url} has no model '{self.model}'{has_models(ids)}: name one with "
                f"--model openai:NAME@{self.base_url}")

    def _refused_key(self, err: Any) -> str:
        how = "set OPENAI_API_KEY" if self.api_key == NO_KEY else "check OPENAI_API_KEY"
        return f"the server at {self.base_url} refused the key (HTTP {err.status_code}): {how}"

    def _status(self, err: Any) -> str:
        return (f"the server at {self.base_url} refused the request (HTTP {err.status_code}: "
                f"{_server_says(err)}): check its log, or try a smaller model")


def _has(ids: list[str], model: str) -> bool:
    return model in ids or (":" not in model and f"{model}:latest" in ids)


def _cached(usage: Any) -> int:
    details = getattr(usage, "prompt_tokens_details", None)
    return int(getattr(details, "cached_tokens", 0) or 0)


def _server_says(err: Any) -> str:
    """The server's own words from an error body: {"error": {"message"}}, {"error": "..."}, {"message"}, {"detail"}."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            inner = inner.get("message") or inner.get("detail") or inner
        return _first_line(inner)
    return _first_line(body or getattr(err, "message", "") or type(err).__name__)


def _transport_errors() -> tuple[type[BaseException], ...]:
    errors: list[type[BaseException]] = []
    for name in ("httpx", "httpx2"):
        try:
            errors.append(__import__(name).TransportError)
        except (ImportError, AttributeError):
            pass
    return tuple(errors)


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0] if lines else type(value).__name__
