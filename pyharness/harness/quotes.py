"""Tool output is data, never orders: an action a reply merely quotes from a file or test output is not run.

A model that echoes a file (in a code fence, or as a `<tool_call>`) would otherwise make the harness run the call
written in that file. The harness parses actions the model writes inside ```json fences on purpose, so the test is
not where the call sits but where its text came from: verbatim from what an action returned this run.
"""

import re
from collections import deque
from dataclasses import dataclass, field

from pyharness.harness.call import RawCall

LINE_NUMBER = re.compile(r"^[ \t]*\d+\| ?", re.MULTILINE)
"""The `  3| ` prefix of read's numbered lines (a model may quote the lines with it or without it)."""
FENCE_OR_TAG = re.compile(r"^\s*(?:```[^\n]*\n|<tool_call>)|(?:\n```|</tool_call>)\s*$")
WHITESPACE = re.compile(r"\s+")
MIN_CHARS = 12
"""Shorter call text (`done()`) is too common to say it came from a file."""
KEEP = 40
"""Tool results remembered (the most recent ones)."""
MAX_CHARS = 400_000
"""Characters of tool output kept per result."""


def _squash(text: str) -> str:
    return WHITESPACE.sub("", text)


@dataclass
class ToolOutput:
    """The text of this run's tool results, squashed for a whitespace-blind 'is it quoted from there' test."""

    texts: deque = field(default_factory=lambda: deque(maxlen=KEEP))

    def add(self, text: str) -> None:
        """Remember one tool result (file content, search hits, test output)."""
        if text:
            self.texts.append(_squash(LINE_NUMBER.sub("", text[:MAX_CHARS])))

    def quotes(self, reply: str, raw: RawCall) -> bool:
        """True when the call's own text (its action line, or the JSON of a fence or `<tool_call>`) is verbatim in
        a tool result of this run."""
        if not self.texts:
            return False
        span = reply[raw.start : raw.end] if raw.end > raw.start else reply[raw.start :]
        kinds = {kind for kind, _ in raw.fixes}
        if kinds & {"parse.json_fence", "parse.tool_call_tag", "parse.bare_json"}:
            source = FENCE_OR_TAG.sub("", span.strip())
        else:
            source = reply[raw.start :].split("\n", 1)[0]
        needle = _squash(LINE_NUMBER.sub("", source))
        return len(needle) >= MIN_CHARS and any(needle in text for text in self.texts)
