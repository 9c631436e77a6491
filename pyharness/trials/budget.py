"""What a search is handed by the loop that starts it (`SearchRun`): the model, the job and its context, the harness's
settings, where its turns are recorded and shown, and the `Budget` it shares with the loop. A search never sees the
loop's Agent: it spends the same steps and seconds and counts into the same run record through the budget."""

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pyharness.actions.base import Context
from pyharness.harness.call import Intervention
from pyharness.harness.pipeline import HarnessConfig
from pyharness.models.base import Model


@dataclass
class Budget:
    """A run's limits and counters, shared by the loop and its search: steps and seconds against the limits, the
    interventions counted for the run (and listed for the current turn's transcript record), tokens spent."""

    result: Any
    """The run's record (`pyharness.loop.runs.RunResult`): steps, attempts, interventions, tokens, the search record."""
    max_steps: int
    max_seconds: float
    started: float = field(default_factory=time.monotonic)
    notes: list[Intervention] = field(default_factory=list)
    """Interventions of the current turn that are not part of the parsed call (loops, steer, accept, search)."""

    def out_of_time(self) -> bool:
        return time.monotonic() - self.started > self.max_seconds

    def count(self, kind: str, detail: str = "", *, note: bool = True) -> None:
        """Count an intervention for the run; with `note`, also list it in this turn's transcript record."""
        self.result.interventions[kind] = self.result.interventions.get(kind, 0) + 1
        if note:
            self.notes.append(Intervention(kind, detail))

    def take_notes(self) -> list[Intervention]:
        """This turn's notes, handed to its record and cleared for the next turn."""
        notes, self.notes = self.notes, []
        return notes

    def spend_tokens(self, reply) -> None:
        """Add a model call's prompt, cached and written tokens to the run's."""
        for name in ("prompt_tokens", "cached_tokens", "completion_tokens"):
            setattr(self.result, name, getattr(self.result, name) + getattr(reply, name))


@dataclass
class SearchRun:
    """The loop's side of a search, as narrow as the search needs it."""

    model: Model
    job: Any
    """The loop's job (`pyharness.loop.jobs.Job`): its mode, task, first test run and acceptance rule."""
    ctx: Context
    harness: HarnessConfig
    budget: Budget
    max_tokens: int
    record_turn: Callable[..., None]
    """Writes one transcript record (`Transcript.turn`)."""
    emit: Callable[..., None] = lambda kind, **data: None
