"""A fake OpenAI-compatible server on 127.0.0.1: /v1/models lists the models it was given, /v1/chat/completions is
answered by a test's function (stream a reply in server-sent events, stall, fail mid-stream, answer 404 or 500), and
so is /v1/completions when a test gives one (`complete`; without it that path answers 404). It counts the requests
it is answering at once (`most`: the highest count seen; a test finds who asked by `exchange.handler.client_address`),
and `stop()` takes it down as a server that died would go (new connections refused)."""

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def delta(text: str = "", finish: str | None = None) -> dict:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake",
            "choices": [{"index": 0, "delta": {"content": text} if text else {}, "finish_reason": finish}]}


def usage(prompt: int = 12, completion: int = 5, cached: int = 0) -> dict:
    return {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "fake", "choices": [],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                      "prompt_tokens_details": {"cached_tokens": cached}}}


def text_piece(text: str = "", finish: str | None = None, logprob: float | None = None) -> dict:
    """One streamed chunk of a text completion (/v1/completions), with the token's log-probability if given."""
    logprobs = None if logprob is None else {"tokens": [text], "token_logprobs": [logprob],
                                             "top_logprobs": [{text: logprob}], "text_offset": [0]}
    return {"id": "t1", "object": "text_completion", "created": 1, "model": "fake",
            "choices": [{"index": 0, "text": text, "logprobs": logprobs, "finish_reason": finish}]}


class Exchange:
    """One chat request: what was asked (`body`), and the means to answer it."""

    def __init__(self, handler: BaseHTTPRequestHandler, body: dict):
        self.handler, self.body = handler, body
        self.started = False

    def status(self, code: int, obj: dict) -> None:
        """Answer with one JSON body and this status (before any event was streamed)."""
        data = json.dumps(obj).encode()
        self.handler.send_response(code)
        self.handler.send_header("Content-Type", "application/json")
        self.handler.send_header("Content-Length", str(len(data)))
        self.handler.end_headers()
        self.handler.wfile.write(data)

    def event(self, obj: dict | str) -> None:
        """Stream one server-sent event (HTTP 200 goes out with the first); a str is sent as it is."""
        if not self.started:
            self.handler.send_response(200)
            self.handler.send_header("Content-Type", "text/event-stream")
            self.handler.end_headers()
            self.started = True
        data = obj if isinstance(obj, str) else json.dumps(obj)
        self.handler.wfile.write(f"data: {data}\n\n".encode())
        self.handler.wfile.flush()

    def reply(self, text: str, *, finish: str = "stop", pieces: int = 3, delay: float = 0.0,
              counts: dict | None = None) -> None:
        """Stream `text` in a few pieces, the finish reason, the token counts (unless `counts` is {}), [DONE]."""
        size = max(1, len(text) // pieces + 1)
        for i in range(0, len(text), size):
            self.event(delta(text[i : i + size]))
            time.sleep(delay)
        self.event(delta(finish=finish))
        if counts != {}:
            self.event(usage(**(counts or {})))
        self.event("[DONE]")

    def complete(self, tokens: list[str], *, logprobs: list[float] | None = None, finish: str = "stop",
                 counts: dict | None = None) -> None:
        """Stream a text completion one token an event (with its log-probability when given), the finish reason,
        the token counts (unless `counts` is {}), [DONE]."""
        for i, token in enumerate(tokens):
            self.event(text_piece(token, logprob=None if logprobs is None else logprobs[i]))
        self.event(text_piece(finish=finish))
        if counts != {}:
            self.event({**usage(**(counts or {})), "object": "text_completion"})
        self.event("[DONE]")


class FakeOpenAI:
    """`with FakeOpenAI(chat) as server:` -- `server.url` is the base URL (…/v1); `chat(exchange)` answers each chat
    request; `models=None` makes /v1/models answer 404."""

    def __init__(self, chat: Callable[[Exchange], None], models: tuple[str, ...] | None = ("fake",),
                 owned_by: str = "organization-owner", complete: Callable[[Exchange], None] | None = None):
        self.chat, self.models, self.owned_by, self.complete = chat, models, owned_by, complete
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.active = self.most = 0
        """Requests being answered now, and the most at once so far."""
        self.lock = threading.Lock()

    def __enter__(self) -> "FakeOpenAI":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.rstrip("/") == "/v1/models" and fake.models is not None:
                    Exchange(self, {}).status(200, {"object": "list", "data": [
                        {"id": m, "object": "model", "created": 1, "owned_by": fake.owned_by} for m in fake.models]})
                else:
                    Exchange(self, {}).status(404, {"error": {"message": "not found", "type": "invalid_request"}})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                path = self.path.rstrip("/")
                answer = {"/v1/chat/completions": fake.chat, "/v1/completions": fake.complete}.get(path)
                if answer is None:
                    Exchange(self, body).status(404, {"error": {"message": "not found"}})
                    return
                with fake.lock:
                    fake.requests.append(body)
                    fake.headers.append({k.lower(): v for k, v in self.headers.items()})
                    fake.active += 1
                    fake.most = max(fake.most, fake.active)
                try:
                    answer(Exchange(self, body))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: that is what a timeout test wants
                finally:  # before the connection closes, so before the client can send its next request
                    with fake.lock:
                        fake.active -= 1

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering and close the listening socket (a second call does nothing); callable from a handler."""
        if getattr(self, "stopped", False):
            return
        self.stopped = True
        self.httpd.shutdown()
        self.httpd.server_close()
