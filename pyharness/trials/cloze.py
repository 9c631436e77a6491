"""Cloze repair (fix mode's `cloze` framing): mask one suspect statement and let the model fill the hole.

Shown the buggy function, a small model sends the bug back; with the buggy line masked it cannot copy it, and a
one-line infill costs a tenth of a function (AlphaRepair; Repilot). The holes are the statements
`linerank.suspect_lines` ranks highest; each is asked for through the model's own fill-in-the-middle tokens
(`Model.infill`, the window of CONTEXT_BEFORE lines above and CONTEXT_AFTER below, indentation given), or, where the
backend has none, as one chat message with the line replaced by a marker. Several samples per hole (greedy first,
then seeded temperatures); a sample that writes the masked text back is dropped before any test runs, and the
rest are tried most likely first (mean token log-probability, where the backend reports it).
"""

import ast
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from pyharness.actions.base import Observation
from pyharness.errors import ActionError, InfillUnsupported
from pyharness.localise.linerank import suspect_lines
from pyharness.localise.linetrace import RunTrace
from pyharness.models.base import END_OF_TURN, ChatOptions, InfillOptions, Model, Reply
from pyharness.trials.brief import Brief, TrialsRecord
from pyharness.trials.candidates import extract_code
from pyharness.trials.judge import Candidate
from pyharness.trials.prompts import MISSING, cloze_chat
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
DEEP_HOLES = 12
"""With the layer `deepcloze`: suspect statements a run may mask (the line ranking puts most bugs in its first ten,
and rounds that spend no step can reach past MAX_HOLES: docs/results.md)."""
MAX_SPAN = 6
"""A statement over this many lines is not masked (the infill would be a function's worth)."""
SPACES = re.compile(r"\s+")


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

    def chat_message(self) -> str:
        """The masked window as one chat message (for a backend without fill-in-the-middle)."""
        return cloze_chat(self.prefix + MISSING + "\n" + self.suffix)

    def filled(self, infill: str) -> str | None:
        """The file with the hole holding `infill` (cut to the fewest of its lines that make the file parse), or
        None when no cut parses or the infill is the masked text again."""
        pieces = infill.rstrip().split("\n")
        if not pieces or not pieces[0].strip():
            return None
        for n in range(1, len(pieces) + 1):
            body = self.indent + pieces[0].strip() + "".join("\n" + p for p in pieces[1:n]) + "\n"
            text = "".join(self.lines[:self.start - 1]) + body + "".join(self.lines[self.end:])
            try:
                ast.parse(text)
            except (SyntaxError, ValueError):
                continue
            return None if same_code(body, self.original) else text
        return None


def same_code(a: str, b: str) -> bool:
    """True when two pieces of code differ only in whitespace and trailing comments."""
    def norm(text: str) -> str:
        return SPACES.sub("", "\n".join(line.split("#", 1)[0] for line in text.splitlines()))
    return norm(a) == norm(b)


def holes(ws: Workspace, trace: RunTrace | None, traceback: str, limit: int = MAX_HOLES) -> list[Hole]:
    """The suspect statements to mask, best first (at most `limit`; long statements left out)."""
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
        first = lines[suspect.start - 1]
        found.append(Hole(suspect.path, suspect.start, suspect.end, len(found) + 1, lines,
                          first[:len(first) - len(first.lstrip())], list(suspect.reasons)))
        if len(found) >= limit:
            break
    return found


@dataclass
class Fill:
    """One sample for a hole: the file it makes, how likely the model found it, and what it cost."""

    sample: int
    text: str
    """What the model wrote into the hole."""
    file: str | None
    """The whole file with the hole filled; None when it was dropped (the masked text again, or no parse)."""
    logprob: float | None = None
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    native: bool = True
    """Asked through fill-in-the-middle (False: the chat framing)."""


def sample_hole(model: Model, hole: Hole, temperatures: list[float], seed: int, max_tokens: int = 96) -> list[Fill]:
    """One fill per temperature (the first is usually greedy), natively where the model can, else in chat."""
    fills = []
    stop = ["\n"] if hole.end == hole.start else ["\n\n"]
    for n, temperature in enumerate(temperatures):
        if getattr(model, "fim", False):
            try:
                got = model.infill(hole.prefix, hole.suffix, InfillOptions(
                    max_tokens=max_tokens, temperature=temperature, seed=seed + n, stop=stop))
                fills.append(Fill(n + 1, got.text, hole.filled(got.text), got.logprob, got.prompt_tokens,
                                  got.cached_tokens, got.completion_tokens, got.seconds))
                continue
            except InfillUnsupported:
                pass  # the server turned it down (and says so from now on): ask in chat
        reply = model.chat([{"role": "user", "content": hole.chat_message()}], ChatOptions(
            stop=END_OF_TURN, max_tokens=max_tokens, temperature=temperature, seed=seed + n))
        code = extract_code(reply.text) or reply.text.strip()
        line = code.strip().split("\n")[0] if code.strip() else ""
        fills.append(Fill(n + 1, line, hole.filled(line), None, reply.prompt_tokens, reply.cached_tokens,
                          reply.completion_tokens, reply.seconds, native=False))
    return fills


def try_order(fills: list[Fill]) -> list[Fill]:
    """The distinct usable fills, most likely first (the model's mean log-probability; without one, in the order
    they were sampled)."""
    seen, kept = set(), []
    for fill in fills:
        if fill.file is None or fill.file in seen:
            continue
        seen.add(fill.file)
        kept.append(fill)
    if all(f.logprob is not None for f in kept):
        kept.sort(key=lambda f: (-f.logprob, f.sample))
    return kept


SAMPLES = 6
"""Fills asked for per hole: greedy, then at the framing's temperature (samples restore lines greedy misses, and six
cost a fraction of one whole-function candidate: docs/results.md)."""


Check = Callable[[str, str, dict[str, str]], Candidate]
"""Checks one fill as a candidate: its origin, the filled file, and that file by its path."""


class ClozeRounds:
    """The `cloze` framing inside fix mode's trials: each round masks the next suspect statement, samples SAMPLES
    fills, and checks the distinct usable ones most likely first until one passes. A round is one step. With the
    layer `deepcloze` rounds spend no step (the clock and DEEP_HOLES bound them: the harness, not the model, chooses
    what a round asks), and a hole none of whose fills is usable (each wrote the code already there back, or did not
    parse: the model stands by the line) does not use up its schedule entry: the next hole is masked at once.

    Given the run's brief (its state, model and job), `check` (a fill's file checked as a candidate) and the trials'
    record, whose `cloze` rounds it keeps."""

    def __init__(self, brief: Brief, check: Check, record: TrialsRecord):
        self.brief, self.state, self.check, self.record = brief, brief.state, check, record
        self.deep = brief.harness.on("deepcloze")
        self.holes: list[Hole] | None = None
        self.rounds: list[dict] = []
        """Per round: the hole with its rank, samples, dropped, checked, which passed, seconds per checked fill."""
        record.cloze = self.rounds

    def next(self, temperature: float) -> tuple[Candidate | None, str]:
        """The best candidate the step checked (None when none was usable) and one line saying how it went;
        (None, '') when no hole is left and no step was spent."""
        if self.holes is None:
            job = self.brief.job
            first = job.first_run
            self.holes = holes(self.brief.ws, job.trace, first.first_traceback if first else "",
                               DEEP_HOLES if self.deep else MAX_HOLES)
        began, best, summary = False, None, ""
        while self.holes and not (began and self.state.out_of_time()):
            if not began and not self.deep:
                self.state.take_step()
            began = True
            best, summary, usable = self._round(self.holes.pop(0), temperature)
            if usable or not self.deep:
                break
        return best, summary

    def _round(self, hole: Hole, temperature: float) -> tuple[Candidate | None, str, int]:
        """Mask one hole, sample it, check its usable fills: (best checked candidate, summary, usable fills)."""
        state, started = self.state, time.monotonic()
        self.brief.emit("thinking", step=state.steps, purpose=f"cloze {hole.path}:{hole.start}")
        seed = (len(self.rounds) + 1 if self.deep else state.steps) * 100  # deep rounds spend no step
        fills = sample_hole(self.brief.model, hole, [0.0] + [temperature] * (SAMPLES - 1), seed=seed)
        for fill in fills:
            self.record.tokens += state.spend(fill)
        generated = time.monotonic() - started
        self.record.candidates += len(fills)
        usable = try_order(fills)
        tried: list[Candidate] = []
        for fill in usable:
            if state.out_of_time():  # the round is one step: only the clock stops its checks
                break
            assert fill.file is not None  # try_order keeps only usable fills
            tried.append(self.check(f"cloze line {hole.rank} sample {fill.sample}", fill.file, {hole.path: fill.file}))
            if tried[-1].verdict.green:
                break
        checked = time.monotonic() - started - generated
        best = max(tried, key=lambda c: c.verdict.rank) if tried else None
        self.rounds.append({
            "hole": f"{hole.path}:{hole.start}" + (f"-{hole.end}" if hole.end > hole.start else ""),
            "rank": hole.rank, "reasons": hole.reasons, "samples": len(fills),
            "native": all(f.native for f in fills), "dropped": sum(f.file is None for f in fills),
            "checked": len(tried), "passed": best.origin if best is not None and best.verdict.green else "",
            "seconds_generating": round(generated, 2),
            "seconds_per_check": round(checked / len(tried), 2) if tried else 0.0})
        state.count("trials.cloze", f"{self.rounds[-1]['hole']}: {len(fills)} fills, {len(tried)} checked")
        summary = "\n".join(f"{c.origin}: " + ("all checks pass" if c.verdict.green else c.verdict.failure)
                            for c in tried) or "no usable fill (each wrote the masked text back or did not parse)"
        self.brief.record_turn(f"<cloze: {self.rounds[-1]['hole']} masked>", _said(fills), {
            "origin": f"cloze line {hole.rank}", "framing": "cloze", "temperature": temperature,
            "fills": [{"sample": f.sample, "text": f.text, "logprob": f.logprob, "used": f.file is not None}
                      for f in fills]},
            {"name": "candidate", "args": {"files": [hole.path]}},
            Observation(summary, ok=best is not None and best.verdict.green))
        if best is not None and not best.verdict.green:
            best.code = ""  # a whole file is no attempt a repair prompt can show
        return best, summary, len(usable)


def _said(fills: list[Fill]):
    """The fills as one reply record for the transcript (what the model wrote, and what it cost)."""
    return Reply("\n".join(f"[{f.sample}] {f.text}" for f in fills),
                 prompt_tokens=sum(f.prompt_tokens for f in fills), cached_tokens=sum(f.cached_tokens for f in fills),
                 completion_tokens=sum(f.completion_tokens for f in fills), seconds=sum(f.seconds for f in fills))
