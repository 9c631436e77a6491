"""Reading a reply into the one action the loop runs: the harness pipeline, prefill of a missing body, escalation of
a low-confidence turn, and the choice among restated calls. The loop (`agent.py`) asks; this module decides what the
reply means."""

from typing import Protocol

from pyharness.actions.base import Context
from pyharness.errors import FormatError
from pyharness.harness.call import ActionCall, Intervention
from pyharness.harness.confidence import THRESHOLD, Confidence
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.steer import redundant
from pyharness.harness.structured import as_action_text
from pyharness.models.base import Model, Reply


class Asking(Protocol):
    """The loop as a Reader sees it (the Agent is one): the harness and its pipeline, the models, this run's format
    errors and looks, and a way to ask the model again."""

    ctx: Context
    harness: HarnessConfig
    pipeline: Pipeline
    model: Model
    escalate: Model | None
    schema: dict | None
    confidence: Confidence
    confidence_last: float
    format_errors: int
    looked: set[tuple[str, str]]

    def query(self, model: Model | None = None, prefix: str = "") -> Reply: ...


class Reader:
    """Turns one reply of the agent's model into one ActionCall (or a FormatError)."""

    def __init__(self, agent: Asking):
        self.agent = agent

    def understand(self, reply: Reply) -> tuple[Reply, ActionCall]:
        """The reply's action after the harness; a low-confidence turn goes to the escalation model if set."""
        agent = self.agent
        truncated = reply.finish_reason == "length"
        escalate = agent.escalate is not None and agent.harness.on("confidence")
        try:
            call = self.choose(agent.pipeline.process_all(self.text(reply), truncated=truncated))
        except FormatError:
            prefix = self.prefill_prefix()
            if prefix:
                return self.continue_body(reply, prefix)
            if not escalate:
                raise
            call = None
        errors = agent.format_errors
        agent.confidence_last = 0.0 if call is None else agent.confidence.score(call, truncated=truncated,
                                                                               format_errors=errors)
        if escalate and agent.confidence_last < THRESHOLD:
            second = agent.query(agent.escalate)
            try:
                better = self.choose(agent.pipeline.process_all(self.text(second)))
            except FormatError:
                if call is None:
                    raise
                return reply, call
            better.interventions.append(
                Intervention("confidence.escalate", f"{agent.confidence_last:.2f} -> {agent.escalate.name}")
            )
            return second, better
        assert call is not None
        return reply, call

    def text(self, reply: Reply) -> str:
        """The reply as the pipeline reads it: protocol=json's object in the text protocol's canonical form."""
        return as_action_text(reply.text) if self.agent.schema else reply.text

    def prefill_prefix(self) -> str:
        """The start of a reply that continues a body-less write or line edit ('' when prefill does not apply)."""
        agent = self.agent
        if not (agent.harness.on("repair") and getattr(agent.model, "prefill", False)) or agent.schema:
            return ""
        return agent.pipeline.pending_prefix()

    def continue_body(self, reply: Reply, prefix: str) -> tuple[Reply, ActionCall]:
        """Let the model continue its own action line into the missing body (no format-error round trip)."""
        second = self.agent.query(prefix=prefix)
        call = self.choose(self.agent.pipeline.process_all(second.text, truncated=second.finish_reason == "length"))
        first = reply.text.strip().splitlines()[0][:80] if reply.text.strip() else ""
        call.interventions.append(Intervention("repair.prefill", f"{first!r} had no body: continued after a fence"))
        return second, call

    def choose(self, calls: list[ActionCall]) -> ActionCall:
        """The first call of a reply that would do something new (small models restate their whole plan)."""
        agent = self.agent
        if not agent.harness.on("loops"):
            return calls[0]
        workspace = agent.ctx.workspace
        state = workspace.state_hash()  # one read of the files per reply, not one per restated call
        for n, call in enumerate(calls):
            if not redundant(call, workspace, agent.looked, state):
                if n:
                    call.interventions = calls[0].interventions + call.interventions
                    call.interventions.append(Intervention("loops.skip_repeat", f"skipped {n} repeated action(s)"))
                return call
        return calls[0]
