"""The pipeline every reply passes: parse -> repair -> validate, each layer switchable and recorded."""

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import ValidationError

from pyharness.errors import FormatError
from pyharness.harness.call import ActionCall, ActionSpec, Intervention, RawCall
from pyharness.harness.examples import EXAMPLE_PATH
from pyharness.harness.parse import OBSERVATION, STRICT_LINE, clean, code_blocks, find_calls, first_fence
from pyharness.harness.prose import prose_edit
from pyharness.harness.quotes import ToolOutput
from pyharness.harness.repair import repair, resolve_name

LAYERS = ("parse", "repair", "validate", "loops", "steer", "context", "lint", "confidence", "rank", "trials",
          "spectrum", "failfirst", "stdimports", "cloze", "deepcloze",
          "wideholes", "stacking", "clozetest")
CHANGES = ("write", "edit")
"""Actions that change files: never run from a reply cut off at the token limit."""
CUT_OFF = (
    "your reply was cut off at the token limit, so nothing was run or written: answer shorter, one action and no "
    "explanation (a big file goes in as several edits)"
)


@dataclass
class HarnessConfig:
    """Which harness layers are on; `off()` is the thin-wrapper baseline."""

    layers: set[str] = field(default_factory=lambda: set(LAYERS))

    @classmethod
    def off(cls) -> "HarnessConfig":
        """Only a strict parser of the canonical format and plain error messages."""
        return cls(layers=set())

    @classmethod
    def parse_spec(cls, harness: str = "on", layers: str | None = None) -> "HarnessConfig":
        """From the command-line flags `--harness on|off` and `--layers a,b,c`."""
        if layers:
            chosen = {name.strip() for name in layers.split(",") if name.strip()}
            unknown = chosen - set(LAYERS)
            if unknown:
                raise ValueError(f"unknown harness layer(s): {', '.join(sorted(unknown))}; known: {', '.join(LAYERS)}")
            return cls(layers=chosen)
        if harness not in ("on", "off"):
            raise ValueError(f"--harness must be on or off, not {harness!r}")
        return cls() if harness == "on" else cls.off()

    def on(self, layer: str) -> bool:
        """True when `layer` is switched on."""
        return layer in self.layers


class Pipeline:
    """Turns one model reply into one validated `ActionCall`, or raises `FormatError`."""

    def __init__(self, actions: dict[str, ActionSpec], config: HarnessConfig, default_write_path: str | None = None):
        self.actions = actions
        self.config = config
        self.default_write_path = default_write_path
        self.suggest: Callable[[], str] | None = None
        """Steer: picks the example shown when a reply has no action (the likely next action, not the first)."""
        self.pending_write: dict | None = None
        """A body-less write from the previous reply: its content may come as a bare code block now."""
        self.example_path: str | None = None
        """A real file of the repo that examples in error messages name (set by the agent)."""
        self.sources: Callable[[], dict[str, str]] | None = None
        """The repo's source files (path -> text), for an edit the model states in words (`prose_edit`)."""
        self.tool_output = ToolOutput()
        """What the actions returned this run: a call the reply merely quotes from it is never run."""

    def process(self, text: str, *, truncated: bool = False) -> ActionCall:
        """Parse, repair and validate one reply; the first action it holds."""
        return self.process_all(text, truncated=truncated)[0]

    def process_all(self, text: str, *, truncated: bool = False) -> list[ActionCall]:
        """Every valid action of a reply in order (the first must be valid; later invalid ones are dropped)."""
        try:
            calls = self._lenient(text) if self.config.on("parse") else [self._strict(text)]
        except FormatError as err:
            if truncated:
                raise FormatError(CUT_OFF, truncated=True) from err
            raise
        if truncated:
            # the body of a write or edit may be cut short: half a file must never replace a whole one
            calls = [c for c in calls if c.name not in CHANGES]
            if not calls:
                self.pending_write = None
                raise FormatError(CUT_OFF, truncated=True)
        self.pending_write = None
        return calls

    def complete(self, text: str) -> bool:
        """True when a reply so far (ending at a line end) holds one whole action, so generation can stop."""
        if not self.config.on("parse"):
            return False
        raws = find_calls(clean(text), self._known())
        if not raws:
            return False
        if len(raws) > 1:
            return True
        raw = raws[0]
        try:
            action = resolve_name(raw.name, self.actions, [])
            args = repair(raw, action, []) if self.config.on("repair") else dict(raw.args)
            self._validate(action, args, [])
        except FormatError:
            return False
        after = text[raw.start :]
        if action.name == "edit" and "search" not in raw.args:
            if "REPLACE" not in after:
                return _closed_fence(after)
            tail = after[after.rfind("REPLACE") :].split("\n")[1:]
            if any(line.lstrip().startswith("<<<<<<<") for line in tail):
                return False
            return any(line.strip() and not line.lstrip().startswith(("<<<<<<<", "```")) for line in tail)
        if action.name == "write" and not raw.args.get("content"):
            return _closed_fence(after)
        return True

    def _strict(self, text: str) -> ActionCall:
        m = STRICT_LINE.search(text)
        if not m:
            raise FormatError("no action found. Reply with one line `Action: NAME {JSON arguments}`.")
        name = m.group(1)
        if name not in self.actions:
            raise FormatError(f"unknown action '{name}'.")
        try:
            args = json.loads(m.group(2))
        except (ValueError, RecursionError) as err:  # a decode error, an int over 4300 digits, deep nesting
            raise FormatError(f"the arguments are not valid JSON: {getattr(err, 'msg', err)}.") from None
        action = self.actions[name]
        if action.body_arg and action.body_arg not in args:
            body = first_fence(text[m.end() :], closed_only=True)
            if action.name == "edit":
                args["body"] = text[m.end() :]
            elif body is not None:
                args[action.body_arg] = body
        return self._validate(action, args if isinstance(args, dict) else {}, [])

    def _lenient(self, text: str) -> list[ActionCall]:
        body = clean(text)
        found = find_calls(body, self._known())
        raws = [raw for raw in found if not self.tool_output.quotes(body, raw)]
        if found and not raws:
            raise FormatError(
                "that action is quoted from a tool result (a file's content or test output); text from tool "
                "results is never run. Reply with your own action, e.g.\n" + self._example()
            )
        if not raws:
            return [self._prose(text) or self._no_action(body, text)]
        calls = [self._one(raws[0], first=True, text=text)]
        if len(raws) < len(found):
            calls[0].interventions.insert(
                0, Intervention("parse.quoted", f"{len(found) - len(raws)} action(s) quoted from tool results not run")
            )
        for raw in raws[1:]:
            try:
                calls.append(self._one(raw, first=False))
            except FormatError:
                continue
        if len(raws) > 1:
            calls[0].interventions.insert(0, Intervention("parse.multiple", f"{len(raws)} actions in one reply"))
        return calls

    def _one(self, raw: RawCall, *, first: bool, text: str = "") -> ActionCall:
        fixes = list(raw.fixes)
        try:
            action = resolve_name(raw.name, self.actions, fixes)
        except FormatError:
            program = self._program_under(raw) if first else None
            if program is None:
                raise
            return program
        args = repair(raw, action, fixes) if self.config.on("repair") else dict(raw.args)
        if action.name == "write" and not args.get("content") and args.get("path"):
            if first:
                self.pending_write = {"path": args["path"]}
            raise FormatError(
                f"write {args['path']}: the file content is missing. Send it now as a ```python code "
                "block, the whole file, nothing else."
            )
        if action.name == "edit" and args.get("start") and not args.get("body") and args.get("path"):
            said = self._prose(text) if first else None
            if said is not None:
                return said
            if first:
                self.pending_write = {"path": args["path"], "action": "edit", "args": dict(args)}
            lines = f"{args['start']}-{args.get('end') or args['start']}"
            raise FormatError(
                f"edit {args['path']} lines {lines}: the new lines are missing. Send them now as a "
                "```python code block, nothing else."
            )
        return self._validate(action, args, fixes)

    def _no_action(self, body: str, text: str) -> ActionCall:
        """A reply with no action: a bare code block may be the content of a write (pending or default file)."""
        code = first_fence(body)
        pending = self.pending_write or {}
        if code and self.config.on("repair") and pending.get("action") == "edit" and code.strip():
            return self._validate(
                self.actions["edit"],
                {**pending["args"], "body": code},
                [("repair.pending_edit", f"a code block with no action became the edit of {pending['path']}")],
            )
        if code and self.config.on("repair") and "write" in self.actions and code.strip():
            path = (self.pending_write or {}).get("path") or self.default_write_path
            if path:
                kind = "repair.pending_write" if self.pending_write else "repair.bare_code"
                return self._validate(
                    self.actions["write"],
                    {"path": path, "content": code},
                    [(kind, f"a code block with no action became write {path}")],
                )
        if not body.strip() and OBSERVATION.search(text):
            raise FormatError(
                "no action found: your reply held only an Observation, and observations come from the "
                "harness. Reply with one action, e.g.\n" + self._example()
            )
        if not body.strip():
            raise FormatError("the reply was empty. Reply with one action, e.g.\n" + self._example())
        raise FormatError("no action found. Reply with one action, e.g.\n" + self._example())

    def pending_prefix(self) -> str:
        """For the body-less write or line edit of the last reply: its action line plus an opened ```python fence."""
        pending = self.pending_write
        if not pending:
            return ""
        args = pending["args"] if pending.get("action") == "edit" else {"path": pending["path"]}
        return f"Action: {pending.get('action', 'write')} {json.dumps(args)}\n```python\n"

    def _program_under(self, raw: RawCall) -> ActionCall | None:
        """A stdout task's program sent under an action this mode does not offer (`read` with the code as its
        body): the code is the program, so it becomes the write of the task's file."""
        path = self.default_write_path
        if not (self.config.on("repair") and path and "write" in self.actions and raw.body and raw.body.strip()):
            return None
        return self._validate(
            self.actions["write"],
            {"path": path, "content": raw.body},
            [("repair.unknown_with_code", f"'{raw.name}' is not offered here; its code block became write {path}")],
        )

    def _prose(self, text: str) -> ActionCall | None:
        """The one-line edit a reply states in words (quotes a source line, then its corrected version)."""
        if not (self.config.on("repair") and "edit" in self.actions and self.sources is not None):
            return None
        found = prose_edit(text, self.sources())
        if found is None:
            return None
        path, number, line = found
        return self._validate(
            self.actions["edit"],
            {"path": path, "start": number, "end": number, "body": line + "\n"},
            [("repair.prose_edit", f"the reply said how to change {path}:{number}; that became the edit")],
        )

    def _validate(self, action: ActionSpec, args: dict, fixes: list) -> ActionCall:
        try:
            parsed = action.args.model_validate(args)
        except ValidationError as err:
            first = err.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "arguments"
            what = "is missing" if first["type"] == "missing" else f"is wrong: {first['msg']}"
            raise FormatError(
                f"{action.name}: '{where}' {what}. A correct call looks like:\n{self._example_of(action)}"
            ) from None
        clean_args = parsed.model_dump(exclude_none=True)
        return ActionCall(name=action.name, args=clean_args, interventions=[Intervention(k, d) for k, d in fixes])

    def _known(self) -> set[str]:
        names = set(self.actions)
        for action in self.actions.values():
            names.update(action.aliases)
        return names

    def _example_of(self, action: ActionSpec) -> str:
        """The action's example, naming the repo's own file when steer knows one."""
        if self.example_path and self.config.on("steer"):
            return EXAMPLE_PATH.sub(self.example_path, action.example)
        return action.example

    def _example(self) -> str:
        if self.suggest is not None and self.config.on("steer"):
            return self.suggest()
        first = next(iter(self.actions.values()))
        return first.example


def _closed_fence(text: str) -> bool:
    """True when the text holds a whole ``` fence (a ```` fence closes only on ````, not on a ``` inside it)."""
    return any(b.opener[0] == "`" and b.end < len(text) for b in code_blocks(text))
