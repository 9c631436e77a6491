"""`scripted:PATH`: canned replies in order, from a JSON list of strings or a recorded transcript."""

import json
import time
from pathlib import Path

from pyharness.errors import ModelError
from pyharness.models.base import ChatOptions, Model, Reply


def load_replies(path: Path) -> list[str]:
    """Replies from a JSON list of strings, or the raw replies of a `.ph/runs/*.jsonl` transcript."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ModelError(f"cannot read scripted replies from {path}: {err.strerror}") from None
    if path.suffix == ".jsonl":
        replies = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                raise ModelError(f"{path}:{n} is not a JSON line; expected a ph transcript") from None
            if record.get("event") == "turn" and isinstance(record.get("reply"), str):
                replies.append(record["reply"])
        return replies
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ModelError(
            f"{path} is not valid JSON ({err.msg} at line {err.lineno}); expected a list of replies"
        ) from None
    if not isinstance(data, list) or not all(isinstance(r, str) for r in data):
        raise ModelError(f"{path} must hold a JSON list of reply strings")
    return data


class ScriptedModel(Model):
    """Replays replies in order; running out ends the run with a clear error."""

    context_window = 32768

    def __init__(self, path: str | Path | None = None, replies: list[str] | None = None, prefill: bool = False):
        self.prefill = prefill
        """With prefill, a reply asked for with a prefix is that prefix plus the next canned reply."""
        self.path = Path(path) if path else None
        self.replies = list(replies) if replies is not None else load_replies(self.path)
        self.name = f"scripted:{self.path}" if self.path else "scripted"
        self.calls = 0

    def chat(self, messages: list[dict], options: ChatOptions) -> Reply:
        """The next canned reply, cut at the first stop sequence as a real backend would."""
        if self.calls >= len(self.replies):
            raise ModelError(f"the scripted model ran out of replies after {len(self.replies)} turns")
        started = time.monotonic()
        text = (options.prefix if self.prefill else "") + self.replies[self.calls]
        self.calls += 1
        for stop in options.stop:
            if stop and stop in text:
                text = text[: text.index(stop)]
        early = False
        if options.should_stop:
            for end in (i + 1 for i, c in enumerate(text) if c == "\n"):
                if end < len(text) and options.should_stop(text[:end]):
                    text, early = text[:end], True
                    break
        if options.on_text:
            options.on_text(text)
        prompt = sum(self.count_tokens(m["content"]) for m in messages)
        return Reply(
            text=text,
            prompt_tokens=prompt,
            completion_tokens=self.count_tokens(text),
            seconds=time.monotonic() - started,
            stopped_early=early,
        )

    def count_tokens(self, text: str) -> int:
        """A rough estimate (4 characters a token): scripted replies cost nothing real."""
        return len(text) // 4 + 1
