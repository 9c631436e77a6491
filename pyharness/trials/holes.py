"""The holes of cloze repair: which statements of the code are masked, best-ranked suspect first, and what a fill
makes of the file.

A hole is a suspect statement (`linerank.suspect_lines`), or with the layer `wideholes` a span or an insertion around
one (`pyharness.trials.wideholes`). It carries the whole file and shows the model a window around itself, never its
own text; a fill is cut to the code that parses, and a fill that writes the masked text back is no fill.
"""

import ast
import re
from dataclasses import dataclass, field, replace

from pyharness.errors import ActionError
from pyharness.localise.linerank import suspect_lines
from pyharness.localise.linetrace import RunTrace
from pyharness.trials.prompts import MISSING, cloze_chat
from pyharness.trials.wideholes import WIDE_SUSPECTS, interleave, wide_regions
from pyharness.workspace.tree import Workspace

CONTEXT_BEFORE, CONTEXT_AFTER = 60, 25
"""Lines of the file shown above and below the hole: enough of the function and its neighbours for the model to see
what the line must do, well inside its context (the window of the probe in docs/results.md)."""
WINDOW_ALIGN = 40
"""The window above a hole starts on a line number that is a multiple of this (so CONTEXT_BEFORE to CONTEXT_BEFORE +
WINDOW_ALIGN - 1 lines are shown): holes near each other then share the prompt's first tokens, and llama.cpp's prefix
cache re-reads only what follows the earlier hole (`benchmarks/cloze_window.py` measures it; 1 turns it off)."""
MAX_HOLES = 8
"""Suspect statements a run may mask, best ranked first."""
MAX_SPAN = 6
"""A statement over this many lines is not masked (the infill would be a function's worth)."""
SPACES = re.compile(r"\s+")
ECHO_CHARS = 12
"""A fill stops where it starts writing the first code line below the hole again, when that line has at least this
many characters besides its indentation (a shorter one, `)` or `else:`, can belong to the fill itself)."""


@dataclass
class Hole:
    """One masked statement: where it is, what it held (never shown to the model), and the text around it."""

    path: str
    start: int
    end: int
    rank: int
    """1 for the best-ranked suspect statement."""
    lines: list[str]
    """The whole file, one string a line (with line ends)."""
    indent: str
    reasons: list[str] = field(default_factory=list)
    kind: str = "line"
    """'line': one statement; 'span': a statement with its block or its neighbour; 'insert': an empty hole above
    line `start` (`end` is start - 1), for code that is missing (`pyharness.trials.wideholes`)."""

    @property
    def label(self) -> str:
        """How rounds and candidates name the hole: its kind and its suspect's rank ('line 1', 'span 2')."""
        return f"{self.kind} {self.rank}"

    @property
    def where(self) -> str:
        """path:line, path:start-end, or path:^line for an insertion above the line."""
        if self.kind == "insert":
            return f"{self.path}:^{self.start}"
        return f"{self.path}:{self.start}" + (f"-{self.end}" if self.end > self.start else "")

    def moved(self, delta: int, lines: list[str]) -> "Hole":
        """The same hole `delta` lines further down a new text of its file."""
        return replace(self, start=self.start + delta, end=self.end + delta, lines=lines)

    @property
    def original(self) -> str:
        return "".join(self.lines[self.start - 1:self.end])

    @property
    def prefix(self) -> str:
        """The window above the hole, ending with the hole's indentation (the model writes only code)."""
        first = max(0, self.start - 1 - CONTEXT_BEFORE)
        return "".join(self.lines[first - first % WINDOW_ALIGN:self.start - 1]) + self.indent

    @property
    def suffix(self) -> str:
        return "".join(self.lines[self.end:self.end + CONTEXT_AFTER])

    @property
    def stops(self) -> list[str]:
        """Where a fill ends: a one-line statement's at its line end, any other at a blank line, and either where it
        writes the next code line below the hole again (its indentation included): the model went on past the hole,
        and every token after that would be cut from the fill anyway (`filled`)."""
        stops = ["\n"] if self.end == self.start and self.kind == "line" else ["\n\n"]
        below = next((line.rstrip() for line in self.lines[self.end:] if line.strip()), "")
        if len(below.strip()) >= ECHO_CHARS:
            stops.append("\n" + below)
        return stops

    def chat_message(self) -> str:
        """The masked window as one chat message (for a backend without fill-in-the-middle)."""
        return cloze_chat(self.prefix + MISSING + "\n" + self.suffix)

    def filled(self, infill: str) -> str | None:
        """The file with the hole holding `infill` (cut to the fewest of its lines that make the file parse; a wide
        hole's to the most, less any last lines that repeat the code below the hole), or None when no cut parses or
        the infill is the masked text again."""
        pieces = infill.rstrip().split("\n")
        if not pieces or not pieces[0].strip():
            return None
        order = range(1, len(pieces) + 1)
        if self.kind != "line":
            pieces = self._without_echo(pieces)
            order = range(len(pieces), 0, -1)
        for n in order:
            body = self.indent + pieces[0].strip() + "".join("\n" + p for p in pieces[1:n]) + "\n"
            text = "".join(self.lines[:self.start - 1]) + body + "".join(self.lines[self.end:])
            try:
                ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            return None if same_code(body, self.original) else text
        return None

    def _without_echo(self, pieces: list[str]) -> list[str]:
        """A wide fill without its last lines where they repeat the first lines below the hole (the model wrote on
        past the hole): an insertion that only repeats the next line becomes nothing."""
        below = self.lines[self.end:self.end + len(pieces)]
        for n in range(len(pieces), 0, -1):
            if len(below) >= n and all(same_code(a, b) for a, b in zip(pieces[-n:], below[:n], strict=True)):
                return pieces[:-n]
        return pieces


def same_code(a: str, b: str) -> bool:
    """True when two pieces of code differ only in whitespace and trailing comments."""
    def norm(text: str) -> str:
        return SPACES.sub("", "\n".join(line.split("#", 1)[0] for line in text.splitlines()))
    return norm(a) == norm(b)


def holes(ws: Workspace, trace: RunTrace | None, traceback: str, limit: int = MAX_HOLES,
          wide: bool = False) -> list[Hole]:
    """The suspect statements to mask, best first (at most `limit`; long statements left out); with `wide`, the span
    and insertion holes of the WIDE_SUSPECTS best among them too, in `wideholes.interleave`'s order."""
    found: list[Hole] = []
    for suspect in suspect_lines(ws, trace or RunTrace(), traceback):
        if suspect.end - suspect.start + 1 > MAX_SPAN:
            continue
        try:
            lines = ws.read_text(suspect.path).splitlines(keepends=True)
        except ActionError:  # a file that cannot be read is no hole
            continue
        if suspect.end > len(lines):
            continue
        found.append(Hole(suspect.path, suspect.start, suspect.end, len(found) + 1, lines,
                          _indent(lines[suspect.start - 1]), list(suspect.reasons)))
        if len(found) >= limit:
            break
    if not wide:
        return found
    around: dict[int, list[Hole]] = {}
    for hole in found[:WIDE_SUSPECTS]:
        for region in wide_regions("".join(hole.lines), hole.start, hole.end, MAX_SPAN):
            around.setdefault(hole.rank, []).append(Hole(hole.path, region.start, region.end, hole.rank, hole.lines,
                                                         _indent(hole.lines[region.start - 1]), hole.reasons,
                                                         region.kind))
    return interleave(found, around)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]
