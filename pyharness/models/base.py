"""The `Model` protocol every backend implements, and the `Reply` it returns."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol


@dataclass
class Reply:
    """One model turn: the text plus what it cost."""

    text: str
    prompt_tokens: int = 0
    """Tokens in the whole prompt of this turn."""
    cached_tokens: int = 0
    """Prompt tokens the backend reused from its prefix cache (not re-read)."""
    completion_tokens: int = 0
    finish_reason: str = "stop"
    """'stop' (end of turn or a stop sequence) or 'length' (cut off at max_tokens)."""
    seconds: float = 0.0
    tool_calls: list[dict] = field(default_factory=list)
    """Native tool calls as {"name": ..., "arguments": {...}}, when the backend returns them."""
    stopped_early: bool = False
    """Generation was ended by `ChatOptions.should_stop` (the reply held one complete action)."""


@dataclass
class ChatOptions:
    """What one call to `Model.chat` may ask for."""

    stop: list[str] = field(default_factory=list)
    max_tokens: int = 768
    temperature: float = 0.0
    seed: int = 0
    on_text: Callable[[str], None] | None = None
    """Called with each streamed piece of text (for live display)."""
    should_stop: Callable[[str], bool] | None = None
    """Called with the text so far at each line end; True ends generation there (one complete action)."""
    schema: dict | None = None
    """A JSON schema the reply must follow (protocol=json): Ollama's `format`, a llama.cpp grammar, an OpenAI
    server's `response_format`; a backend that cannot enforce one is told nothing (scripted replies)."""
    prefix: str = ""
    """Assistant prefill: the reply must begin with this text and the model continues it (only for a model whose
    `prefill` is True). `Reply.text` and `should_stop` see the prefix plus the continuation."""


class Model(Protocol):
    """A chat model: messages in ({"role", "content"} dicts), one `Reply` out. Backends subclass it to inherit
    `loaded` and `load`."""

    name: str
    context_window: int
    prefill: bool
    """True when `chat` honours `ChatOptions.prefix` (continues a started assistant message)."""

    def chat(self, messages: list[dict], options: ChatOptions) -> Reply: ...

    def count_tokens(self, text: str) -> int: ...

    @property
    def loaded(self) -> bool:
        """False while the model still has to load into this process (llama.cpp); a served model is always ready."""
        return True

    def load(self) -> None:
        """Load the model now, so that the first turn does not; a backend with nothing to load does nothing."""
