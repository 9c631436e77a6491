"""Reading a reply into the one action the loop runs: the harness pipeline, prefill of a missing body, escalation of
a low-confidence turn, and the choice among restated calls. The loop (`agent.py`) asks; this module decides what the
reply means."""

from collections.abc import Callable

from pyharness.errors import FormatError
from pyharness.harness.call import ActionCall, Intervention
from pyharness.harness.confidence import THRESHOLD, Confidence
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.steer import redundant
from pyharness.harness.structured import as_action_text
from pyharness.models.base import Model, Reply
from pyharness.workspace.tree import Workspace

Ask = Callable[[Model | None, str], Reply]
"""Asks for one more reply: of the escalation model (or the run's, for None), continuing a started reply."""


class Reader:
    """Turns one reply of the run's model into one ActionCall (or a FormatError); keeps the run's confidence scores
    and the looks (read, list, search) already taken on each state of the files."""

    def __init__(self, pipeline: Pipeline, harness: HarnessConfig, workspace: Workspace, model: Model, ask: Ask, *,
                 escalate: Model | None = None, json_protocol: bool = False):
        self.pipeline, self.harness, self.workspace, self.model, self.ask = pipeline, harness, workspace, model, ask
        self.escalate, self.json_protocol = escalate, json_protocol
        self.confidence = Confidence()
        self.score = 1.0
        """The latest turn's confidence (0 when it held no valid action)."""
        self.looked: set[tuple[str, str]] = set()
        """(call key, state of the files) of each look taken: a look at unchanged files is not taken again."""

    def understand(self, reply: Reply, format_errors: int = 0) -> tuple[Reply, ActionCall]:
        """The reply's action after the harness; a low-confidence turn goes to the escalation model if set
        (`format_errors`: replies in a row that held no valid action, which lower the score)."""
        truncated = reply.finish_reason == "length"
        escalate = self.escalate is not None and self.harness.on("confidence")
        try:
            call = self.choose(self.pipeline.process_all(self.text(reply), truncated=truncated))
        except FormatError:
            prefix = self.prefill_prefix()
            if prefix:
                return self.continue_body(reply, prefix)
            if not escalate:
                raise
            call = None
        self.score = 0.0 if call is None else self.confidence.score(call, truncated=truncated,
                                                                    format_errors=format_errors)
        if escalate and self.score < THRESHOLD:
            assert self.escalate is not None
            second = self.ask(self.escalate, "")
            try:
                better = self.choose(self.pipeline.process_all(self.text(second)))
            except FormatError:
                if call is None:
                    raise
                return reply, call
            said = f"{self.score:.2f} -> {self.escalate.name}"
            better.interventions.append(Intervention("confidence.escalate", said))
            return second, better
        assert call is not None
        return reply, call

    def text(self, reply: Reply) -> str:
        """The reply as the pipeline reads it: protocol=json's object in the text protocol's canonical form."""
        return as_action_text(reply.text) if self.json_protocol else reply.text

    def prefill_prefix(self) -> str:
        """The start of a reply that continues a body-less write or line edit ('' when prefill does not apply)."""
        if not (self.harness.on("repair") and getattr(self.model, "prefill", False)) or self.json_protocol:
            return ""
        return self.pipeline.pending_prefix()

    def continue_body(self, reply: Reply, prefix: str) -> tuple[Reply, ActionCall]:
        """Let the model continue its own action line into the missing body (no format-error round trip)."""
        second = self.ask(None, prefix)
        call = self.choose(self.pipeline.process_all(second.text, truncated=second.finish_reason == "length"))
        first = reply.text.strip().splitlines()[0][:80] if reply.text.strip() else ""
        call.interventions.append(Intervention("repair.prefill", f"{first!r} had no body: continued after a fence"))
        return second, call

    def choose(self, calls: list[ActionCall]) -> ActionCall:
        """The first call of a reply that would do something new (small models restate their whole plan)."""
        if not self.harness.on("loops"):
            return calls[0]
        state = self.workspace.state_hash()  # one read of the files per reply, not one per restated call
        for n, call in enumerate(calls):
            if not redundant(call, self.workspace, self.looked, state):
                if n:
                    call.interventions = calls[0].interventions + call.interventions
                    call.interventions.append(Intervention("loops.skip_repeat", f"skipped {n} repeated action(s)"))
                return call
        return calls[0]
