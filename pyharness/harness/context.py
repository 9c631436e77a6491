"""context: watch the prompt's size against the model's window; warn at 75%, compact old observations at 90%."""

from dataclasses import dataclass

WARN, COMPACT = 0.75, 0.90
KEEP_RECENT = 4
"""Messages at the end of the history that compaction never touches."""


@dataclass
class ContextGuard:
    """Pressure levels from real token counts; compaction rewrites the history once, in one large step."""

    window: int
    compactions: int = 0

    def pressure_hint(self, prompt_tokens: int) -> str:
        """A short warning for the newest message when the prompt passes 75% of the window."""
        if self.window and prompt_tokens >= WARN * self.window:
            return (f"the conversation is long ({prompt_tokens} of {self.window} tokens): be brief, read only the "
                    "lines you need, and finish soon.")
        return ""

    def compact(self, messages: list[dict], prompt_tokens: int) -> list[dict]:
        """At 90% of the window, replace every old observation by a one-line stub (system and task stay)."""
        if not self.window or prompt_tokens < COMPACT * self.window or len(messages) <= 2 + KEEP_RECENT:
            return messages
        head, middle, tail = messages[:2], messages[2:-KEEP_RECENT], messages[-KEEP_RECENT:]
        stubbed = []
        for message in middle:
            content = message["content"]
            if message["role"] == "user" and len(content) > 200:
                first = content.splitlines()[0][:150]
                content = f"{first} [observation compacted: {content.count(chr(10)) + 1} lines omitted]"
            elif message["role"] == "assistant" and len(content) > 400:
                content = content[:300] + " [rest of reply compacted]"
            stubbed.append({"role": message["role"], "content": content})
        self.compactions += 1
        return head + stubbed + tail
