"""`scripted:PATH`: canned replies in order, from a JSON list of strings, a recorded transcript, or a JSON object
`{"replies": [...], "infills": [...]}` that also scripts fill-in-the-middle answers."""

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

from pyharness.errors import InfillUnsupported, ModelError
from pyharness.models.base import ChatOptions, Infill, InfillOptions, Model, Reply


@dataclass
class InfillPrompt:
    """What one `infill` call was given (kept so tests can check what the model was shown)."""

    prefix: str
    suffix: str
    options: InfillOptions


def load_replies(path: Path) -> list[str]:
    """Replies from a JSON list of strings, the raw replies of a `.ph/runs/*.jsonl` transcript, or the "replies" of
    a script object."""
    return load_script(path)[0]


def load_script(path: Path) -> tuple[list[str], list[Infill] | None]:
    """Chat replies, and infill answers or None when the file scripts none: a JSON list of reply strings, a
    transcript, or `{"replies": [str, ...], "infills": [str | {"text": str, "logprob": float}, ...]}`."""
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
        return replies, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as err:
        raise ModelError(
            f"{path} is not valid JSON ({err.msg} at line {err.lineno}); expected a list of replies"
        ) from None
    infills = None
    if isinstance(data, dict):
        if "infills" in data:
            infills = [_scripted_infill(item, path) for item in _listed(data["infills"], path, "infills")]
        data = data.get("replies", [])
    if not isinstance(data, list) or not all(isinstance(r, str) for r in data):
        raise ModelError(f"{path} must hold a JSON list of reply strings, or an object whose \"replies\" is one")
    return data, infills


def _listed(value: object, path: Path, key: str) -> list:
    if not isinstance(value, list):
        raise ModelError(f"{path}: \"{key}\" must be a JSON list")
    return value


def _scripted_infill(item: object, path: Path) -> Infill:
    if isinstance(item, str):
        return Infill(text=item)
    if isinstance(item, dict) and isinstance(item.get("text"), str):
        logprob = item.get("logprob")
        if logprob is None or isinstance(logprob, int | float):
            return Infill(text=item["text"], logprob=None if logprob is None else float(logprob))
    raise ModelError(f"{path}: each infill must be a string or {{\"text\": str, \"logprob\": number}}, not {item!r}")


class ScriptedModel(Model):
    """Replays replies (and infills) in order; running out ends the run with a clear error."""

    context_window = 32768

    def __init__(self, path: str | Path | None = None, replies: list[str] | None = None, prefill: bool = False,
                 infills: list[str | Infill] | None = None):
        self.prefill = prefill
        """With prefill, a reply asked for with a prefix is that prefix plus the next canned reply."""
        self.path = Path(path) if path else None
        scripted: list[Infill] | None = None
        if replies is None:
            replies, scripted = load_script(self.path)
        self.replies = list(replies)
        if infills is not None:
            scripted = [Infill(text=i) if isinstance(i, str) else i for i in infills]
        self.infills = scripted
        """Canned infills in order; None: this model has no fill-in-the-middle (`fim` is False)."""
        self.fim = scripted is not None
        self.name = f"scripted:{self.path}" if self.path else "scripted"
        self.calls = 0
        self.infill_prompts: list[InfillPrompt] = []
        """Every prefix and suffix `infill` was given, in order."""

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

    def infill(self, prefix: str, suffix: str, options: InfillOptions) -> Infill:
        """The next canned infill, cut at the first stop sequence as a real backend would."""
        if self.infills is None:
            raise InfillUnsupported(f"{self.name} scripts no infills (give \"infills\" in the script); "
                                    "frame the hole as a chat turn instead")
        if len(self.infill_prompts) >= len(self.infills):
            raise ModelError(f"the scripted model ran out of infills after {len(self.infills)}")
        started = time.monotonic()
        canned = self.infills[len(self.infill_prompts)]
        self.infill_prompts.append(InfillPrompt(prefix, suffix, options))
        text, finish = canned.text, canned.finish_reason
        for stop in options.stop:
            if stop and stop in text:
                text, finish = text[: text.index(stop)], "stop"
        return replace(canned, text=text, finish_reason=finish,
                       prompt_tokens=self.count_tokens(prefix) + self.count_tokens(suffix),
                       completion_tokens=self.count_tokens(text), seconds=time.monotonic() - started)

    def count_tokens(self, text: str) -> int:
        """A rough estimate (4 characters a token): scripted replies cost nothing real."""
        return len(text) // 4 + 1
