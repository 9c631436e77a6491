"""One run's state: the steps, tokens and seconds it spent against its limits, the interventions it counted, and how it
ended. The loop, the trials and the cloze rounds are each handed the same `RunState`; none of them counts for another,
and none reads another's privates. A run ends with an exception that carries its reason (`Done`, `LimitsExceeded`,
`Invalid`, a `ModelError`, Ctrl-C); `RunState.end` turns it into the typed `Outcome` of the run's record, so no part of
ph reads an outcome back out of a message.

Below the loop and the trials, above localise (pyproject.toml's layers); imports only the harness's `Intervention`.
"""

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from pyharness.errors import Done, Invalid, StopRun
from pyharness.harness.call import Intervention


class Outcome(StrEnum):
    """How a run ended (its record's `outcome`, written as the plain word)."""

    DONE = "done"
    """The harness accepted the job."""
    STOPPED = "stopped"
    """A budget, a loop or repeated format errors ended it."""
    INVALID = "invalid"
    """The judge was touched: fix mode's test files or test config changed (`RunResult.invalid` says how)."""
    ERROR = "error"
    """The model backend failed."""
    INTERRUPTED = "interrupted"
    """Ctrl-C."""


@dataclass
class RunResult:
    """How a run ended and what it cost."""

    outcome: Outcome
    reason: str
    steps: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    answer: str = ""
    transcript: str = ""
    interventions: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    """Versions of the code the harness checked: changes applied by the loop, or candidates run by the trials."""
    first_pass: int = 0
    """Which attempt was accepted (1: the first try; 0: none was)."""
    trials: dict = field(default_factory=dict)
    """What the trials did: candidates generated and run, which one passed, seconds and tokens spent."""
    invalid: str | None = None
    """Why the run does not count (fix mode: test files or test config changed during it), or None."""
    changed: list[str] = field(default_factory=list)
    """Files the run changed (`ph undo` puts them back)."""
    refusals: list[str] = field(default_factory=list)
    """Every action refused by policy (path, protected file, limit), as `action path: message`."""
    put_back: str = ""
    """fix mode: what was put back at the end because the tree failed more judging tests than at the start ('' when
    nothing was: `pyharness.workspace.keepbest`)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C ended a run; carries the run's result so the command line can say what was changed."""

    def __init__(self, result: RunResult):
        super().__init__()
        self.result = result


class Spent(Protocol):
    """What one model call cost (a chat `Reply`, a cloze `Fill`)."""

    prompt_tokens: int
    cached_tokens: int
    completion_tokens: int


class RunState:
    """The one place a run counts: steps, tokens and seconds against the run's limits, interventions (and the ones of
    the current turn, for its transcript record), and the outcome (`result`, the record the run gives back)."""

    def __init__(self, max_steps: int, max_seconds: float, transcript: str = ""):
        self.max_steps, self.max_seconds = max_steps, max_seconds
        self.started = time.monotonic()
        self.result = RunResult(Outcome.STOPPED, "", transcript=transcript)
        self.notes: list[Intervention] = []
        """Interventions of the current turn that are not part of its parsed call (loops, steer, accept, trials)."""

    @property
    def steps(self) -> int:
        return self.result.steps

    def out_of_time(self) -> bool:
        return time.monotonic() - self.started > self.max_seconds

    @property
    def time_up(self) -> str:
        return f"time budget of {self.max_seconds:.0f} s used up"

    def spent(self) -> str:
        """Why no further step may start: the step or the time budget used up ('' while both allow one)."""
        if self.result.steps >= self.max_steps:
            return f"step budget of {self.max_steps} used up"
        return self.time_up if self.out_of_time() else ""

    def take_step(self) -> int:
        """Start the next step (a model turn, a candidate, a cloze round that spends one); its number. The caller
        has asked `spent()` first: a step under way is never cut short by the count."""
        self.result.steps += 1
        self.notes = []
        return self.result.steps

    def spend(self, call: Spent) -> int:
        """Add a model call's tokens to the run's; the tokens it read anew and wrote (what it cost beyond the cache)."""
        self.result.prompt_tokens += call.prompt_tokens
        self.result.cached_tokens += call.cached_tokens
        self.result.completion_tokens += call.completion_tokens
        return call.prompt_tokens - call.cached_tokens + call.completion_tokens

    def count(self, kind: str, detail: str = "", *, note: bool = True) -> None:
        """Count an intervention for the run; with `note`, also list it in this turn's transcript record."""
        self.result.interventions[kind] = self.result.interventions.get(kind, 0) + 1
        if note:
            self.notes.append(Intervention(kind, detail))

    def take_notes(self) -> list[Intervention]:
        """This turn's notes, handed to its record and cleared for the next turn."""
        notes, self.notes = self.notes, []
        return notes

    def end(self, stop: StopRun) -> None:
        """The run ended by the harness's rule: done, invalid (the judge was touched) or stopped, with the reason."""
        if isinstance(stop, Done):
            self.result.outcome, self.result.reason = Outcome.DONE, str(stop)
            self.result.first_pass = self.result.first_pass or max(1, self.result.attempts)
        elif isinstance(stop, Invalid):
            self.invalidate(str(stop))
        else:
            self.result.outcome, self.result.reason = Outcome.STOPPED, str(stop)

    def invalidate(self, why: str) -> None:
        """The run does not count: fix mode's test files or test config changed (during it, or found after it)."""
        self.result.outcome, self.result.reason, self.result.invalid = Outcome.INVALID, f"run invalid: {why}", why

    def fail(self, err: Exception) -> None:
        """The model backend failed (the error goes on to the command line)."""
        self.result.outcome, self.result.reason = Outcome.ERROR, str(err)

    def interrupt(self) -> Interrupted:
        """Ctrl-C: the exception that carries this run's record up to the command line."""
        self.result.outcome, self.result.reason = Outcome.INTERRUPTED, "interrupted by the user (Ctrl-C)"
        return Interrupted(self.result)

    def close(self, changed: list[str]) -> RunResult:
        """The run's record at its end: the files it changed and the seconds it took."""
        self.result.changed = changed
        self.result.seconds = round(time.monotonic() - self.started, 2)
        return self.result
