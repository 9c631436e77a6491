"""A fake Ollama on 127.0.0.1 for the safety suite: a threading http.server whose /api/chat behaviour a test
scripts (stream slowly, stall, fail mid-stream, answer 404 or 500), bounded by time."""

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def chunk(text: str, model: str = "fake") -> dict:
    return {"model": model, "created_at": "2025-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text}, "done": False}


def last(done_reason: str = "stop", model: str = "fake") -> dict:
    return {"model": model, "created_at": "2025-01-01T00:00:01Z", "message": {"role": "assistant", "content": ""},
            "done": True, "done_reason": done_reason, "prompt_eval_count": 10, "eval_count": 5}


class Exchange:
    """One /api/chat request: what was asked, and the means to answer it."""

    def __init__(self, handler: BaseHTTPRequestHandler, body: dict, server: "FakeOllama"):
        self.handler, self.body, self.server = handler, body, server
        self.started = False

    def status(self, code: int, obj: dict) -> None:
        """Answer with one JSON body and this status (before any line was streamed)."""
        data = json.dumps(obj).encode()
        self.handler.send_response(code)
        self.handler.send_header("Content-Type", "application/json")
        self.handler.send_header("Content-Length", str(len(data)))
        self.handler.end_headers()
        self.handler.wfile.write(data)

    def line(self, obj: dict) -> None:
        """Stream one NDJSON line (HTTP 200 is sent with the first)."""
        if not self.started:
            self.handler.send_response(200)
            self.handler.send_header("Content-Type", "application/x-ndjson")
            self.handler.end_headers()
            self.started = True
        self.handler.wfile.write((json.dumps(obj) + "\n").encode())
        self.handler.wfile.flush()
        self.server.streaming.set()

    def reply(self, text: str, *, done_reason: str = "stop", pieces: int = 3, delay: float = 0.0) -> None:
        """Stream `text` in a few pieces, then the final line."""
        size = max(1, len(text) // pieces + 1)
        for i in range(0, len(text), size):
            self.line(chunk(text[i : i + size]))
            time.sleep(delay)
        self.line(last(done_reason))


class FakeOllama:
    """`with FakeOllama(chat) as server:` -- `server.host` for OLLAMA_HOST; `chat(exchange)` answers each request."""

    def __init__(self, chat: Callable[[Exchange], None], models: tuple[str, ...] = ("fake:latest",)):
        self.chat, self.models = chat, models
        self.requests: list[dict] = []
        self.streaming = threading.Event()
        """Set once the first NDJSON line went out."""

    def __enter__(self) -> "FakeOllama":
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path.startswith("/api/tags"):
                    Exchange(self, {}, fake).status(200, {"models": [
                        {"name": m, "model": m, "modified_at": "2025-01-01T00:00:00Z", "size": 1, "digest": "d"}
                        for m in fake.models]})
                else:
                    Exchange(self, {}, fake).status(404, {"error": "not found"})

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                fake.requests.append(body)
                try:
                    fake.chat(Exchange(self, body, fake))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up: that is what a timeout test wants

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.host = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
