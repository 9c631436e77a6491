"""confidence: a score per call from schema match, repair cost, completeness and this run's history."""

from dataclasses import dataclass, field

from pyharness.harness.call import ActionCall

THRESHOLD = 0.5
"""Below this a turn goes to the escalation model, when one is configured."""


@dataclass
class Confidence:
    """Scores calls; remembers how each action fared in this run."""

    attempts: dict[str, int] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)

    def score(self, call: ActionCall, *, truncated: bool = False, format_errors: int = 0) -> float:
        """1.0 for a clean canonical call of an action that has worked; lower for repairs, cut-offs, failures."""
        value = 1.0
        for item in call.interventions:
            if item.kind.startswith("repair."):
                value -= 0.12
            elif item.kind in ("parse.multiple", "loops.skip_repeat"):
                value -= 0.03
            elif item.kind.startswith("parse."):
                value -= 0.05
        if truncated:
            value -= 0.3
        value -= 0.1 * min(format_errors, 3)
        tried = self.attempts.get(call.name, 0)
        if tried >= 2:
            value -= 0.3 * self.failures.get(call.name, 0) / tried
        return round(max(0.0, min(1.0, value)), 3)

    def record(self, name: str, ok: bool) -> None:
        """Count one outcome of an action."""
        self.attempts[name] = self.attempts.get(name, 0) + 1
        if not ok:
            self.failures[name] = self.failures.get(name, 0) + 1
