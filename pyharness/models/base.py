"""The `Model` protocol every backend implements, and the `Reply` (chat) and `Infill` (fill-in-the-middle) it
returns."""

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from pyharness.errors import InfillUnsupported

END_OF_TURN = ["<|im_end|>", "<|endoftext|>"]
"""Stop sequences of a plain request (code back, no action protocol): the chat template's end of a turn, and of the
text, when a backend does not stop there itself."""


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


@dataclass
class InfillOptions:
    """What one call to `Model.infill` may ask for."""

    max_tokens: int = 128
    temperature: float = 0.0
    seed: int = 0
    stop: list[str] = field(default_factory=lambda: ["\n"])
    """The infill ends before the first of these (by default at the end of its first line)."""
    files: tuple[tuple[str, str], ...] = ()
    """Other files shown before the hole's own, as (path, text), for a model trained on a repository-level format
    (Qwen2.5-Coder's `<|repo_name|>` and `<|file_sep|>`); a backend without one leaves them out."""
    path: str = ""
    """The hole's file, which that format names before its prefix."""


@dataclass
class Infill:
    """The text the model put between a prefix and a suffix, plus what it cost."""

    text: str
    """Cut before the first stop sequence; the stop itself is not included."""
    prompt_tokens: int = 0
    cached_tokens: int = 0
    """Prompt tokens the backend reused from its prefix cache (not re-read)."""
    completion_tokens: int = 0
    seconds: float = 0.0
    logprob: float | None = None
    """Mean log-probability of the generated tokens under the model (the token that ended the infill included), when
    the backend reports it; None otherwise. Closer to 0 is more likely."""
    finish_reason: str = "stop"
    """'stop' (a stop sequence or the end of the middle) or 'length' (cut off at max_tokens: likely incomplete)."""


class Model(Protocol):
    """A chat model: messages in ({"role", "content"} dicts), one `Reply` out. Backends subclass it to inherit
    `loaded` and `load`."""

    name: str
    context_window: int
    prefill: bool
    """True when `chat` honours `ChatOptions.prefix` (continues a started assistant message)."""

    fim: bool = False
    """True when `infill` may fill a hole natively (the model's fill-in-the-middle tokens). False: `infill` raises
    `InfillUnsupported`, and a caller frames the hole as a chat turn instead. A server that turns an infill down
    raises `InfillUnsupported` too, after which `fim` is False."""

    def chat(self, messages: list[dict], options: ChatOptions) -> Reply: ...

    def infill(self, prefix: str, suffix: str, options: InfillOptions) -> Infill:
        """The text the model puts between `prefix` and `suffix` (the model never sees what was there)."""
        raise InfillUnsupported(f"{self.name} has no fill-in-the-middle; frame the hole as a chat turn instead")

    def count_tokens(self, text: str) -> int: ...

    @property
    def loaded(self) -> bool:
        """False while the model still has to load into this process (llama.cpp); a served model is always ready."""
        return True

    def load(self) -> None:
        """Load the model now, so that the first turn does not; a backend with nothing to load does nothing."""
