"""The records of a call: what the harness knows of an action (`ActionSpec`), an action as found in a reply
(`RawCall`), and as the harness hands it on (`ActionCall`), with what it did to get it (`Intervention`)."""

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from pydantic import BaseModel


class ActionSpec(Protocol):
    """What the harness knows of an action (`pyharness.actions.base.Action` is one): its name and argument schema,
    how to call it, and the names small models use for it. The harness never imports the actions themselves."""

    name: str
    args: "type[BaseModel]"
    description: str
    example: str
    body_arg: str | None
    aliases: tuple[str, ...]


@dataclass
class RawCall:
    """An action as found in the text, before names and arguments are repaired."""

    name: str
    args: dict = field(default_factory=dict)
    positional: list = field(default_factory=list)
    body: str | None = None
    """The block after the action line (file content or edit blocks), byte-for-byte."""
    fixes: list[tuple[str, str]] = field(default_factory=list)
    start: int = 0
    end: int = 0
    """Where this call's text (arguments and body) ends in the reply."""


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
