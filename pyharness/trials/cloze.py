"""Cloze repair (fix mode's `cloze` framing): mask one suspect statement and let the model fill the hole.

Shown the buggy function, a small model sends the bug back; with the buggy line masked it cannot copy it, and a
one-line infill costs a tenth of a function (AlphaRepair; Repilot). The holes are the statements
`linerank.suspect_lines` ranks highest (`pyharness.trials.holes`); each is asked for through the model's own
fill-in-the-middle tokens (`Model.infill`, the hole's window around it, indentation given), or, where the
backend has none, as one chat message with the line replaced by a marker. Several samples per hole (greedy first,
then seeded temperatures); a sample that writes the masked text back is dropped before any test runs, and the
rest are tried most likely first (mean token log-probability, where the backend reports it).
"""

import textwrap
import time
from collections.abc import Callable
from dataclasses import dataclass

from pyharness.actions.base import Observation
from pyharness.errors import InfillUnsupported
from pyharness.localise.linetrace import RunTrace
from pyharness.models.base import END_OF_TURN, ChatOptions, InfillOptions, Model, Reply
from pyharness.trials.brief import Brief, TrialsRecord
from pyharness.trials.candidates import extract_code
from pyharness.trials.clozetest import failing_test_file
from pyharness.trials.holes import MAX_HOLES, Hole, holes
from pyharness.trials.judge import Candidate
from pyharness.trials.verdicts import trace_in_scratch
from pyharness.trials.wideholes import rebase

DEEP_HOLES = 12
"""With the layer `deepcloze`: suspect statements a run may mask (the line ranking puts most bugs in its first ten,
and rounds that spend no step can reach past MAX_HOLES: docs/results.md)."""


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


def sample_hole(model: Model, hole: Hole, temperatures: list[float], seed: int, max_tokens: int = 96,
                files: tuple[tuple[str, str], ...] = ()) -> list[Fill]:
    """One fill per temperature (the first is usually greedy), natively where the model can, else in chat. A wide
    hole gets WIDE_TOKENS (a few statements); `files` are shown before the hole's file where the backend can
    (`pyharness.trials.clozetest`)."""
    fills = []
    stop = hole.stops
    max_tokens = max(max_tokens, WIDE_TOKENS) if hole.kind != "line" else max_tokens
    for n, temperature in enumerate(temperatures):
        if getattr(model, "fim", False):
            try:
                got = model.infill(hole.prefix, hole.suffix, InfillOptions(
                    max_tokens=max_tokens, temperature=temperature, seed=seed + n, stop=stop, files=files,
                    path=hole.path))
                fills.append(Fill(n + 1, got.text, hole.filled(got.text), got.logprob, got.prompt_tokens,
                                  got.cached_tokens, got.completion_tokens, got.seconds))
                continue
            except InfillUnsupported:
                pass  # the server turned it down (and says so from now on): ask in chat
        reply = model.chat([{"role": "user", "content": hole.chat_message()}], ChatOptions(
            stop=END_OF_TURN, max_tokens=max_tokens, temperature=temperature, seed=seed + n))
        code = extract_code(reply.text) or reply.text.strip()
        if hole.kind == "line":
            line = code.strip().split("\n")[0] if code.strip() else ""
        else:  # the lines as the model indented them, moved to the hole's indentation
            line = textwrap.indent(textwrap.dedent(code.strip("\n")), hole.indent).strip()
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


WIDE_TOKENS = 160
"""The tokens a wide hole's fill may take: a guard with its block, or a few statements."""
SAMPLES = 6
"""Fills asked for per hole: greedy, then at the framing's temperature (samples restore lines greedy misses, and six
cost a fraction of one whole-function candidate: docs/results.md)."""


Check = Callable[[str, str, dict[str, str]], Candidate]
"""Checks one fill as a candidate: its origin, the filled file, and that file by its path."""
Adopt = Callable[[Candidate], bool]
"""Offered the fills of a round that passed no check, best ranked first: True when one was kept in the tree (the tests
did better with it), so later holes are filled on top of it."""


class ClozeRounds:
    """The `cloze` framing inside fix mode's trials: each round masks the next suspect statement, samples SAMPLES
    fills, and checks the distinct usable ones most likely first until one passes. A round is one step. With the
    layer `deepcloze` rounds spend no step (the clock and DEEP_HOLES bound them: the harness, not the model, chooses
    what a round asks), and a hole none of whose fills is usable (each wrote the code already there back, or did not
    parse: the model stands by the line) does not use up its schedule entry: the next hole is masked at once.

    With the layer `wideholes` the holes include spans and insertions (`pyharness.trials.wideholes`); a round's
    fills that passed nothing are offered to `adopt` (the layer `stacking`), best first, and once one is kept, the
    holes still to come are moved onto the new text and filled on top of it (each round record says on top of which
    fills).

    Given the run's brief (its state, model and job), `check` (a fill's file checked as a candidate), the trials'
    record, whose `cloze` rounds it keeps, and `adopt`."""

    def __init__(self, brief: Brief, check: Check, record: TrialsRecord, adopt: Adopt | None = None):
        self.brief, self.state, self.check, self.record, self.adopt = brief, brief.state, check, record, adopt
        self.deep = brief.harness.on("deepcloze")
        first = brief.job.first_run
        self.test = failing_test_file(brief.ws, brief.job.failing_before[0], first.first_traceback if first else "") \
            if brief.harness.on("clozetest") and brief.job.failing_before else ()
        """The failing test, shown before each hole's file (the layer `clozetest`)."""
        self.holes: list[Hole] | None = None
        self.rounds: list[dict] = []
        """Per round: the hole with its rank, samples, dropped, checked, which passed, seconds per checked fill."""
        record.cloze = self.rounds
        self.kept: list[str] = []
        """The fills kept in the tree so far (their origins), in order: later holes are filled on top of them."""
        self.asked: list[Hole] = []
        """The holes masked so far, where they are in the files as they are now."""

    def next(self, temperature: float) -> tuple[Candidate | None, str]:
        """The best candidate the step checked (None when none was usable) and one line saying how it went;
        (None, '') when no hole is left and no step was spent."""
        if self.holes is None:
            first = self.brief.job.first_run
            self.holes = self._holes(self.brief.job.trace, first.first_traceback if first else "")
        began, best, summary = False, None, ""
        while self.holes and not (began and self.state.out_of_time()):
            if not began and not self.deep:
                self.state.take_step()
            began = True
            self.asked.append(self.holes.pop(0))
            best, summary, usable = self._round(self.asked[-1], temperature)
            if usable or not self.deep:
                break
        return best, summary

    def _round(self, hole: Hole, temperature: float) -> tuple[Candidate | None, str, int]:
        """Mask one hole, sample it, check its usable fills: (best checked candidate, summary, usable fills)."""
        state, started = self.state, time.monotonic()
        self.brief.emit("thinking", step=state.steps, purpose=f"cloze {hole.where}")
        seed = (len(self.rounds) + 1 if self.deep else state.steps) * 100  # deep rounds spend no step
        fills = sample_hole(self.brief.model, hole, [0.0] + [temperature] * (SAMPLES - 1), seed=seed, files=self.test)
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
            tried.append(self.check(f"cloze {hole.label} sample {fill.sample}", fill.file, {hole.path: fill.file}))
            if tried[-1].verdict.green:
                break
        checked = time.monotonic() - started - generated
        best = max(tried, key=lambda c: c.verdict.rank) if tried else None
        on_top_of, kept = list(self.kept), self._keep(hole, tried)
        self.rounds.append({
            "hole": hole.where, "kind": hole.kind,
            "rank": hole.rank, "reasons": hole.reasons, "samples": len(fills),
            "native": all(f.native for f in fills), "dropped": sum(f.file is None for f in fills),
            "checked": len(tried), "passed": best.origin if best is not None and best.verdict.green else "",
            "seconds_generating": round(generated, 2),
            "seconds_per_check": round(checked / len(tried), 2) if tried else 0.0,
            **({"on_top_of": on_top_of} if on_top_of else {}),
            **({"kept": kept.origin} if kept is not None else {})})
        state.count("trials.cloze", f"{self.rounds[-1]['hole']}: {len(fills)} fills, {len(tried)} checked")
        summary = "\n".join(f"{c.origin}: " + ("all checks pass" if c.verdict.green else c.verdict.failure)
                            for c in tried) or "no usable fill (each wrote the masked text back or did not parse)"
        if kept is not None:
            summary += f"\nkept {kept.origin}: the tests do better with it; the next holes are filled on top of it"
        self.brief.record_turn(f"<cloze: {self.rounds[-1]['hole']} masked>", _said(fills), {
            "origin": f"cloze {hole.label}", "framing": "cloze", "temperature": temperature,
            **({"on_top_of": on_top_of} if on_top_of else {}),
            "fills": [{"sample": f.sample, "text": f.text, "logprob": f.logprob, "used": f.file is not None}
                      for f in fills]},
            {"name": "candidate", "args": {"files": [hole.path]}},
            Observation(summary, ok=best is not None and best.verdict.green))
        if best is not None and not best.verdict.green:
            best.code = ""  # a whole file is no attempt a repair prompt can show
        return best, summary, len(usable)


    def _keep(self, hole: Hole, tried: list[Candidate]) -> Candidate | None:
        """Offer a round's fills, best ranked first, to `adopt` when none passed; the one kept (None when none
        was), and once one is, the holes still to come are moved onto the file it made."""
        if self.adopt is None or any(c.verdict.green for c in tried):
            return None
        kept = next((c for c in sorted(tried, key=lambda c: c.verdict.rank, reverse=True) if self.adopt(c)), None)
        if kept is not None:
            self.kept.append(kept.origin)
            new = kept.files[hole.path].splitlines(keepends=True)
            self.holes = rebase(self.holes or [], hole.path, hole.start, hole.end, new, len(hole.lines))
            self.asked = rebase(self.asked, hole.path, hole.start, hole.end, new, len(hole.lines))
            self._relocalise(hole.path, hole.start, hole.start + len(new) - len(hole.lines) + hole.end - hole.start)
        return kept

    def _holes(self, trace: RunTrace | None, traceback: str) -> list[Hole]:
        return holes(self.brief.ws, trace, traceback, DEEP_HOLES if self.deep else MAX_HOLES,
                     wide=self.brief.harness.on("wideholes"))

    def _relocalise(self, path: str, start: int, end: int) -> None:
        """After a kept fill (now lines start..end of `path`): the holes ranked again from where the first test
        that still fails now fails (the code it reaches may be new: a test's next assertion calls other code), less
        those asked already and those under the fill; the queue as it was when that cannot be measured."""
        if self.state.out_of_time():
            return
        brief = self.brief
        run, ran = trace_in_scratch(brief.ws, brief.job, brief.ctx)
        if not run.failing or not ran.lines:
            return
        ran.scores = brief.job.trace.scores if brief.job.trace else {}
        asked = {(h.path, h.start, h.end, h.kind) for h in self.asked}
        self.holes = [h for h in self._holes(ran, run.first_traceback) if (h.path, h.start, h.end, h.kind) not in asked
                      and not (h.path == path and h.start <= end and h.end >= start)]


def _said(fills: list[Fill]):
    """The fills as one reply record for the transcript (what the model wrote, and what it cost)."""
    return Reply("\n".join(f"[{f.sample}] {f.text}" for f in fills),
                 prompt_tokens=sum(f.prompt_tokens for f in fills), cached_tokens=sum(f.cached_tokens for f in fills),
                 completion_tokens=sum(f.completion_tokens for f in fills), seconds=sum(f.seconds for f in fills))
