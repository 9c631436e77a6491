"""What every backend's streamed reply shares: the one loop that reads it (`read_stream`: show each piece, end at a
stop sequence the server did not apply, or where `should_stop` says the reply holds one whole action), and for HTTP
servers the timeouts (first token, idle gap, the whole reply)."""

import queue
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from pyharness.errors import ModelError
from pyharness.models.base import ChatOptions

T = TypeVar("T")


@dataclass
class StreamLimits:
    """How long a server may keep a streamed reply waiting."""

    first_token_seconds: float = 600.0
    """Longest wait for the first chunk: generous, as loading a model can take minutes."""
    stall_seconds: float = 120.0
    """Longest silence between two streamed chunks."""
    total_seconds: float = 1800.0
    """Longest one reply may take in all, even while chunks keep coming."""


def timed(
    open_stream: Callable[[], Iterator[T]],
    started: float,
    limits: StreamLimits,
    *,
    silent: Callable[[float], str],
    too_long: str,
    name: str = "model-stream",
) -> Iterator[T]:
    """The chunks of `open_stream()`, read by a helper thread so that a silent server is noticed on time: no first
    chunk within `first_token_seconds`, a gap over `stall_seconds`, or a reply over `total_seconds` ends it with a
    `ModelError` (`silent(seconds)` or `too_long`). `open_stream` returns a generator that raises only `ModelError`;
    it is closed (closing the response, so the server stops generating) when the reader stops early."""
    chunks: queue.Queue = queue.Queue()
    stop = threading.Event()

    def read() -> None:
        try:
            stream = open_stream()
            for chunk in stream:
                chunks.put(("chunk", chunk))
                if stop.is_set():
                    stream.close()  # type: ignore[attr-defined]
                    return
            chunks.put(("end", None))
        except ModelError as err:
            chunks.put(("error", err))

    threading.Thread(target=read, name=name, daemon=True).start()
    first = True
    try:
        while True:
            left = started + limits.total_seconds - time.monotonic()
            wait = min(limits.first_token_seconds if first else limits.stall_seconds, left)
            try:
                kind, item = chunks.get(timeout=max(wait, 0.0))
            except queue.Empty:
                raise ModelError(too_long if wait >= left else silent(wait)) from None
            if kind == "error":
                raise item
            if kind == "end":
                return
            first = False
            yield item
    finally:
        stop.set()


def first_stop(text: str, stops: list[str], start: int) -> int | None:
    """Where the earliest stop sequence begins in `text[start:]`, or None."""
    found = [i for s in stops if s and (i := text.find(s, max(start, 0))) >= 0]
    return min(found) if found else None


def show_before_stop(text: str, shown: int, stops: list[str], on_text: Callable[[str], None] | None) -> int:
    """Hand `on_text` the text after `shown`, but for a tail that may begin a stop sequence; the new `shown`."""
    held = max((k for s in stops for k in range(1, len(s)) if text.endswith(s[:k])), default=0)
    upto = max(shown, len(text) - held)
    if on_text is not None and upto > shown:
        on_text(text[shown:upto])
    return upto


def longest_stop(stops: list[str]) -> int:
    """The longest stop sequence's length (how far back a new piece may complete one)."""
    return max((len(s) for s in stops), default=0)


@dataclass
class Streamed:
    """A streamed reply as read: its text (the prefix first), the server's finish reason, and whether this side
    ended it."""

    text: str
    finish: str | None
    """The last finish reason the server gave ('stop', 'length', ...); None when it gave none."""
    early: bool = False
    """`ChatOptions.should_stop` ended it at a line end (the reply held one whole action)."""
    cut: bool = False
    """A stop sequence the server did not apply ended it here."""

    @property
    def ended_here(self) -> bool:
        return self.early or self.cut


def read_stream(pieces: Iterable[tuple[str, str | None]], options: ChatOptions,
                stops: list[str] | None = None) -> Streamed:
    """The one loop over a streamed chat reply. `pieces` yields (text, finish reason or None) as they arrive. Each
    text goes to `options.on_text` (a tail that may begin one of `stops`, the stop sequences this side applies, is
    held back until it cannot); a stop sequence ends the reply where it begins; at a line end `options.should_stop`
    may end it. The reply starts with `options.prefix`, which is not shown again."""
    stops = stops or []
    text, shown = options.prefix, len(options.prefix)
    finish, early, cut = None, False, False
    for piece, reason in pieces:
        if piece:
            before = len(text)
            text += piece
            at = first_stop(text, stops, max(len(options.prefix), before - longest_stop(stops)))
            if at is not None:
                text, cut = text[:at], True
            shown = show_before_stop(text, shown, [] if cut else stops, options.on_text)
            if not cut and "\n" in piece and options.should_stop and options.should_stop(text):
                early = True
            if cut or early:
                break
        if reason:
            finish = reason
    show_before_stop(text, shown, [], options.on_text)
    return Streamed(text, finish, early, cut)

