"""`ActionCall`: one action found in a model reply, plus what the harness did to get it."""

import json
from dataclasses import dataclass, field


@dataclass
class Intervention:
    """One thing a harness layer did (recorded in the transcript and counted by evals)."""

    kind: str
    """The layer and what it did, e.g. 'repair.json', 'repair.alias', 'loops.hint'."""
    detail: str = ""


@dataclass
class ActionCall:
    """An action the model asked for: its name and arguments after parse and repair."""

    name: str
    args: dict = field(default_factory=dict)
    interventions: list[Intervention] = field(default_factory=list)

    def key(self) -> str:
        """A stable text key of name and arguments (for loop detection)."""
        return self.name + " " + json.dumps(self.args, sort_keys=True, ensure_ascii=False)
