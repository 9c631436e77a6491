"""The `ollama:NAME` backend: a model served by a local Ollama, through the official `ollama` client."""

import math
import os
import time
from collections.abc import Iterator
from contextlib import closing
from typing import Any

from pyharness.errors import InfillUnsupported, ModelError
from pyharness.models.base import ChatOptions, Infill, InfillOptions, Model, Reply
from pyharness.models.streaming import StreamLimits, read_stream, timed

DEFAULT_HOST = "http://127.0.0.1:11434"
EMBEDDED_HINT = "use the embedded model with --model llamacpp:qwen2.5-coder-1.5b"
CTX_STEP = 1024
CTX_MIN = 2048
CTX_MARGIN = 256
"""Tokens added to the estimate for the chat template and the estimate's own error."""
AVAILABLE_TIMEOUT = 5.0
CONNECT_TIMEOUT = 10.0


class OllamaModel(Model):
    """A chat model served by Ollama; every failure becomes a one-line `ModelError`."""

    prefill = True

    def __init__(
        self,
        name: str = "llama3.1:8b",
        host: str | None = None,
        stall_seconds: float = 120.0,
        context_window: int = 8192,
        first_token_seconds: float = 600.0,
        total_seconds: float = 1800.0,
    ):
        self.model = name
        self.name = f"ollama:{name}"
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self.stall_seconds = stall_seconds
        """Longest silence between two streamed chunks."""
        self.first_token_seconds = first_token_seconds
        """Longest wait for the first chunk: generous, as loading a model (`load_duration`) can take minutes."""
        self.total_seconds = total_seconds
        """Longest one reply may take in all, even while chunks keep coming."""
        self.context_window = context_window
        self._num_ctx = 0
        self._client: Any = None
        self._fim: bool | None = None

    def chat(self, messages: list[dict], options: ChatOptions) -> Reply:
        """Stream one reply; pieces go to `options.on_text` as they arrive."""
        started = time.monotonic()
        request = dict(
            model=self.model,
            # a final assistant message is continued, not answered: Ollama's way to prefill a reply
            messages=[*messages, {"role": "assistant", "content": options.prefix}] if options.prefix else messages,
            stream=True,
            options={
                "num_ctx": self.num_ctx_for(messages, options.max_tokens),
                "temperature": options.temperature,
                "seed": options.seed,
                "num_predict": options.max_tokens,
                "stop": options.stop,
            },
        )
        if options.schema is not None:
            request["format"] = options.schema  # structured outputs (Ollama 0.5+)
        final: Any = None

        def pieces() -> Iterator[tuple[str, str | None]]:
            nonlocal final
            for chunk in self._timed(request, started):
                final = chunk if chunk.done else final
                yield chunk.message.content or "", (chunk.done_reason or "stop") if chunk.done else None
                if chunk.done:
                    return

        with closing(pieces()) as stream:
            read = read_stream(stream, options)  # Ollama applies the stop sequences itself
        if final is None and not read.early:
            raise ModelError(
                f"Ollama at {self.host} ended the reply before finishing: check that `ollama serve` is still running",
                transient=True,
            )
        written = read.text[len(options.prefix):]
        counted = final is not None and not read.early
        return Reply(
            text=read.text,
            prompt_tokens=(final.prompt_eval_count or 0) if counted else self.count_tokens(str(messages)),
            cached_tokens=0,  # Ollama does not report prefix-cache hits
            completion_tokens=(final.eval_count or 0) if counted else self.count_tokens(written),
            finish_reason="length" if counted and read.finish == "length" else "stop",
            stopped_early=read.early,
            seconds=time.monotonic() - started,
        )

    @property
    def fim(self) -> bool:
        """False when Ollama says the model cannot insert (its template has no suffix); asked once. True while the
        server does not answer: the first infill then reports what is wrong."""
        if self._fim is None:
            self._fim = self._inserts()
        return True if self._fim is None else self._fim

    def infill(self, prefix: str, suffix: str, options: InfillOptions) -> Infill:
        """`/api/generate` with `suffix`: Ollama wraps prefix and suffix in the model's own FIM template."""
        started = time.monotonic()
        request = dict(
            model=self.model,
            prompt=prefix,
            # an empty suffix means "no suffix" to Ollama, which then answers through the chat template
            suffix=suffix or "\n",
            raw=False,
            stream=True,
            logprobs=True,
            options={
                "num_ctx": self.num_ctx_for([{"content": prefix}, {"content": suffix}], options.max_tokens),
                "temperature": options.temperature,
                "seed": options.seed,
                "num_predict": options.max_tokens,
                "stop": options.stop,
            },
        )
        text, logprobs, final, cut = "", [], None, False
        try:
            for chunk in self._timed(request, started, call="generate"):
                text += chunk.response or ""
                logprobs.extend(float(lp.logprob) for lp in chunk.logprobs or [])
                at = min((i for stop in options.stop if stop and (i := text.find(stop)) >= 0), default=None)
                if at is not None:  # Ollama cuts at a stop itself; this is for one that did not
                    text, cut = text[:at], True
                    break
                if chunk.done:
                    final = chunk
                    break
        except ModelError as err:
            if _refuses_insert(err.__cause__):
                self._fim = False
                raise InfillUnsupported(f"Ollama's {self.model} does not support fill-in-the-middle (its template has "
                                        "no suffix); frame the hole as a chat turn instead") from None
            raise
        if final is None and not cut:
            raise ModelError(
                f"Ollama at {self.host} ended the infill before finishing: check that `ollama serve` is still running",
                transient=True,
            )
        return Infill(
            text=text,
            prompt_tokens=(final.prompt_eval_count or 0) if final else self.count_tokens(prefix + suffix),
            cached_tokens=0,  # Ollama does not report prefix-cache hits
            completion_tokens=(final.eval_count or 0) if final else self.count_tokens(text),
            seconds=time.monotonic() - started,
            logprob=sum(logprobs) / len(logprobs) if logprobs else None,
            finish_reason="length" if final is not None and final.done_reason == "length" else "stop",
        )

    def _inserts(self) -> bool | None:
        """Whether Ollama lists 'insert' among the model's capabilities (or, before capabilities were listed, its
        template uses .Suffix); None when the server does not answer."""
        import httpx
        import ollama

        try:
            shown = ollama.Client(host=self.host, timeout=AVAILABLE_TIMEOUT).show(self.model)
        except (ollama.ResponseError, httpx.HTTPError, OSError, ValueError):
            return None
        if shown.capabilities is not None:
            return "insert" in shown.capabilities
        return ".Suffix" in (shown.template or "")

    def count_tokens(self, text: str) -> int:
        """An estimate (about 3 characters a token); Ollama has no tokenize endpoint."""
        return len(text) // 3 + 1

    def num_ctx_for(self, messages: list[dict], max_tokens: int) -> int:
        """The context size to ask for: prompt estimate + reply budget, in 1024 steps, within the window."""
        chars = sum(len(str(m.get("content") or "")) for m in messages)
        wanted = math.ceil(chars / 3) + max_tokens + CTX_MARGIN
        size = min(max(CTX_MIN, math.ceil(wanted / CTX_STEP) * CTX_STEP), self.context_window)
        # A new num_ctx makes Ollama reload the model and drop its prefix cache, so it only ever grows.
        self._num_ctx = max(self._num_ctx, size)
        return self._num_ctx

    def available(self) -> bool:
        """True if the server answers and has this model; never raises."""
        listed = self.listed()
        return listed is not None and self.has(listed)

    def listed(self) -> list[str] | None:
        """The models the server has, or None when it does not answer (or answers nonsense); never raises."""
        import httpx
        import ollama

        try:
            client = ollama.Client(host=self.host, timeout=min(self.stall_seconds, AVAILABLE_TIMEOUT))
            return sorted(m.model for m in client.list().models if m.model)
        except (ollama.ResponseError, httpx.HTTPError, OSError, ValueError):
            # OSError covers ollama's ConnectionError; ValueError covers unreadable JSON.
            return None

    def has(self, listed: list[str] | set[str]) -> bool:
        """True if `listed` holds this model (a bare name matches its `:latest` tag)."""
        return self.model in listed or (":" not in self.model and f"{self.model}:latest" in listed)

    def check(self) -> None:
        """Before a run touches anything: a `ModelError` when the server is not there or lacks the model."""
        import httpx
        import ollama

        try:
            client = ollama.Client(host=self.host, timeout=AVAILABLE_TIMEOUT)
            listed = {m.model for m in client.list().models}
        except (httpx.ConnectError, ConnectionError) as err:
            raise ModelError(self._unreachable(err)) from None
        except (ollama.ResponseError, httpx.HTTPError, OSError, ValueError):
            return  # an odd answer to the listing: the chat request reports what is wrong
        if not self.has(listed):
            raise ModelError(f"Ollama has no model '{self.model}': run `ollama pull {self.model}`" + has_models(listed))

    def _get_client(self) -> Any:
        if self._client is None:
            import httpx
            import ollama

            # httpx's read timeout is only the backstop; first-token, idle and total timeouts are kept by _timed.
            read = max(self.first_token_seconds, self.stall_seconds)
            self._client = ollama.Client(host=self.host, timeout=httpx.Timeout(read, connect=CONNECT_TIMEOUT))
        return self._client

    def _timed(self, request: dict, started: float, call: str = "chat") -> Iterator[Any]:
        """The reply's chunks (of `/api/chat`, or `/api/generate` for `call="generate"`), ended on time by a silent or
        endless server (see `streaming.timed`)."""
        limits = StreamLimits(self.first_token_seconds, self.stall_seconds, self.total_seconds)
        return timed(
            lambda: self._chunks(getattr(self._get_client(), call)(**request)),
            started,
            limits,
            name="ollama-stream",
            silent=lambda wait: f"Ollama sent nothing for {wait:g} s: the model may be too big for this machine; "
            "check `ollama ps`, or try a smaller model with --model ollama:NAME",
            too_long=f"Ollama's reply took over {self.total_seconds:g} s, the limit of one reply: the model may "
            "be looping; try again, or a smaller model with --model ollama:NAME",
        )

    def _unreachable(self, err: BaseException) -> str:
        causes, cause = [], err
        while cause is not None and len(causes) < 5:  # the client wraps httpx's error, which names the reason
            causes.append(str(cause).lower())
            cause = cause.__cause__ or cause.__context__
        reason = "connection refused" if any("refused" in c for c in causes) else "no connection"
        return f"Ollama not reachable at {self.host} — is `ollama serve` running? ({reason}; or {EMBEDDED_HINT})"

    def _chunks(self, stream: Iterator[Any]) -> Iterator[Any]:
        """The streamed chunks, with every transport or server failure turned into a `ModelError`."""
        import httpx
        import ollama

        try:
            yield from stream
        except ollama.ResponseError as e:
            # -1 marks an {"error": ...} line after HTTP 200; 5xx a server failure: asking again may work
            raise ModelError(self._response_error(e), transient=e.status_code == -1 or e.status_code >= 500) from e
        except httpx.ConnectTimeout as e:
            raise ModelError(
                f"Ollama not reachable at {self.host} — is `ollama serve` running? (no answer within "
                f"{CONNECT_TIMEOUT:g} s; or {EMBEDDED_HINT})"
            ) from e
        except (httpx.ConnectError, ConnectionError) as e:
            raise ModelError(self._unreachable(e)) from e
        except httpx.TimeoutException as e:
            raise ModelError(
                f"Ollama sent nothing for {max(self.first_token_seconds, self.stall_seconds):g} s: the model may be "
                "too big for this machine; check `ollama ps`, or try a smaller model with --model ollama:NAME"
            ) from e
        except httpx.TransportError as e:
            raise ModelError(
                f"Ollama dropped the connection mid-reply ({_first_line(e)}): "
                "check that `ollama serve` is still running",
                transient=True,
            ) from e
        except ValueError as e:
            # An unparsable NDJSON line or a chunk of an unexpected shape.
            raise ModelError(
                f"Ollama sent an unreadable reply ({_first_line(e)}): upgrade Ollama or check its server log"
            ) from e

    def _response_error(self, e: Any) -> str:
        if e.status_code == 404:
            return f"Ollama has no model '{self.model}': run `ollama pull {self.model}`"
        if e.status_code == -1:  # the client's mark for an {"error": ...} line after HTTP 200
            return f"Ollama failed mid-reply: {_first_line(e.error)}: check its server log, then try again"
        return (
            f"Ollama refused the request (HTTP {e.status_code}: {_first_line(e.error)}): "
            f"check its server log, or try a smaller model with --model ollama:NAME"
        )


def has_models(listed: list[str] | set[str], limit: int = 8) -> str:
    """`' (it has: a, b)'`, to follow a 'no such model' message; '' when the server has none."""
    names = sorted(listed)
    if not names:
        return " (it has no models yet)"
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return f" (it has: {', '.join(names[:limit])}{more})"


def _refuses_insert(cause: object) -> bool:
    """True for Ollama's answer to a suffix the model's template cannot take ("... does not support insert")."""
    said = str(getattr(cause, "error", "") or "").lower()
    return "support" in said and ("insert" in said or "suffix" in said)


def _first_line(value: object) -> str:
    lines = str(value).strip().splitlines()
    return lines[0] if lines else type(value).__name__
