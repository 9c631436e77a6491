"""What the trials are handed by the loop that starts them (`Brief`): the model, the job and its context, the harness's
settings, the run's state, and where their turns are written and shown; and what they keep (`TrialsRecord`). The
trials never see the loop's Agent: they spend the run's steps, tokens and seconds through its `RunState`."""

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Protocol

from pyharness.actions.base import Context, Observation
from pyharness.harness.pipeline import HarnessConfig
from pyharness.localise.linetrace import RunTrace
from pyharness.models.base import Model, Reply
from pyharness.runstate import RunState
from pyharness.workspace.keepbest import BestTree
from pyharness.workspace.testrun import TestRun
from pyharness.workspace.tree import Workspace


class JobView(Protocol):
    """The loop's job (`pyharness.loop.jobs.Job`) as the trials read it: its mode and task, the first test run and
    the tests that failed in it, the trace of the first failing test, and the job's acceptance rule."""

    mode: str
    task: str
    failing_before: list[str]
    first_run: TestRun | None
    trace: RunTrace | None

    def accept(self, final: Observation, ws: Workspace, ctx: Context) -> str: ...


class TurnWriter(Protocol):
    """Writes one transcript record of a model call (`pyharness.loop.transcript.Transcript.turn`)."""

    def __call__(self, step: int, new_messages: list[dict], reply: Reply, **fields) -> None: ...


@dataclass
class Brief:
    """The loop's side of the trials, as narrow as they need it."""

    model: Model
    job: JobView
    ctx: Context
    harness: HarnessConfig
    state: RunState
    max_tokens: int
    write_turn: TurnWriter
    emit: Callable[..., None] = lambda kind, **data: None
    best: BestTree | None = None
    """fix mode: the best state of the tree seen so far (a kept candidate is one), put back if the run ends worse."""

    @property
    def ws(self) -> Workspace:
        return self.ctx.workspace

    def record_turn(self, message: str, reply: Reply, trial: dict, action: dict, observation: Observation) -> None:
        """One transcript record per model call, in the fields of the loop's turns (so `ph show` reads both)."""
        self.write_turn(self.state.steps, [{"role": "user", "content": message}], reply, trial=trial, action=action,
                        interventions=[vars(i) for i in self.state.take_notes()], observation=observation.text,
                        ok=observation.ok)


@dataclass
class TrialsRecord:
    """What the trials did, for the run's record (`RunResult.trials`)."""

    candidates: int = 0
    """Candidates asked for (each cloze fill counts)."""
    run: int = 0
    """Distinct candidates checked in a scratch copy."""
    duplicates: int = 0
    passed_by: str = ""
    seconds: float = 0.0
    tokens: int = 0
    """Tokens the trials' model calls read anew and wrote."""
    attempts: list[str] = field(default_factory=list)
    """Each candidate checked, one line: its origin and how its check went."""
    imports_added: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    """By candidate: the standard-library imports the harness added before its check (layer `stdimports`)."""
    cloze: list[dict] | None = None
    """Per cloze round: the hole with its rank, samples, dropped, checked, which passed, seconds per checked fill."""
    vote: dict | None = None
    """How agreement chose among passing candidates."""
    handoff: str | None = None
    """The candidate (or 'before') the loop went on from when the schedule ended without a pass."""
    combined: list[str] | None = None
    """The fills kept in the tree because the tests did better with them (layer `stacking`), in order."""

    def as_dict(self) -> dict:
        """The record as JSON holds it: what was not used (cloze, vote, handoff, combined) is left out."""
        return {k: v for k, v in asdict(self).items() if v is not None}
