"""The canonical reply of a call: the text the prompt's examples teach, which the harness reads back as that very call
with nothing to repair (training data shows a model this, never the reply the harness had to mend).

Text protocol: `Action: NAME {json args}`, and for a change (write, edit) the file content or the edit's lines in a
block after the line (SEARCH/REPLACE blocks as they are, anything else in a ```python fence, longer when the code
holds a fence itself). protocol=json: the one JSON object `{"action", "args", "body"}` the schema asks for.
"""

import json
import re

from pyharness.actions.base import Action
from pyharness.errors import FormatError
from pyharness.harness.pipeline import CHANGES, HarnessConfig, Pipeline
from pyharness.harness.structured import as_action_text

SEARCH_BLOCK = "<<<<<<< SEARCH"


def canonical_reply(name: str, args: dict, actions: dict[str, Action], *, json_protocol: bool = False) -> str:
    """The reply that calls `name` with `args` in the protocol's canonical form."""
    action = actions.get(name)
    body_arg = action.body_arg if action is not None and name in CHANGES else None
    body = args.get(body_arg) if body_arg else None
    line_args = {k: v for k, v in args.items() if k != body_arg} if isinstance(body, str) and body else dict(args)
    if json_protocol:
        obj = {"action": name, "args": line_args}
        if isinstance(body, str) and body:
            obj["body"] = body
        return json.dumps(obj, ensure_ascii=False)
    line = f"Action: {name} {json.dumps(line_args, ensure_ascii=False)}"
    if not isinstance(body, str) or not body:
        return line
    if name == "edit" and body.lstrip().startswith(SEARCH_BLOCK):
        return f"{line}\n{body.strip(chr(10))}"
    return f"{line}\n{fenced(body)}"


def fenced(code: str) -> str:
    """Code in a ```python fence (a longer fence when the code holds one itself)."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`{3,}", code)), default=0))
    return f"{fence}python\n{code.rstrip(chr(10))}\n{fence}"


def read_call(text: str, actions: dict[str, Action], *, json_protocol: bool = False,
              default_write_path: str | None = None, truncated: bool = False) -> tuple[str, dict, list[str]] | None:
    """The call the harness (every layer on) reads from a reply: name, arguments and the kinds of what it repaired;
    None when the reply holds no valid action (or, `truncated`, only a change cut off at the token limit)."""
    pipeline = Pipeline(actions, HarnessConfig(), default_write_path=default_write_path)
    try:
        call = pipeline.process(as_action_text(text) if json_protocol else text, truncated=truncated)
    except FormatError:
        return None
    return call.name, call.args, [i.kind for i in call.interventions]


def reads_back(text: str, name: str, args: dict, actions: dict[str, Action], *, json_protocol: bool = False) -> bool:
    """True when the harness reads `text` as this call, with nothing repaired (a body's surrounding newlines aside:
    where a block ends is the protocol's, and the actions keep a file's final newline themselves)."""
    read = read_call(text, actions, json_protocol=json_protocol)
    return read is not None and read[0] == name and not read[2] and same_args(read[1], args)


def same_args(a: dict, b: dict) -> bool:
    """Arguments equal up to the newlines around a body (`content`, `body`)."""
    def norm(args: dict) -> dict:
        return {k: v.strip("\n") if k in ("content", "body") and isinstance(v, str) else v for k, v in args.items()}

    return norm(a) == norm(b)
