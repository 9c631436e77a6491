"""protocol=json: every reply is one JSON object, held to a JSON schema by the backend (Ollama's `format`, a
llama.cpp grammar, an OpenAI server's `response_format`), instead of an action line plus a fenced body.

The schema makes valid JSON of the right shape certain where the backend enforces it; it does not make the call
right: the action's arguments are still a free JSON object, so each reply is turned back into the text protocol's
canonical form (`Action: NAME {args}` and the body in a fence) and goes through the same parse, repair and validate
as any reply. Garbage that fits the schema is refused there (safety case 54).
"""

import json
import re

from pyharness.harness.call import ActionSpec
from pyharness.harness.parse import STRICT_LINE, first_fence

JSON_REMINDER = ('\n(Reply with one JSON object: {"action": NAME, "args": {...}, "body": "..."}; a file\'s content or '
                 'an edit\'s new lines go in "body".)')


def reply_schema(actions: dict[str, ActionSpec]) -> dict:
    """The JSON schema of one reply: which action, its arguments, and the body (a file's content, an edit's lines)."""
    return {
        "type": "object",
        "properties": {
            "action": {"type": "string", "enum": list(actions)},
            "args": {"type": "object"},
            "body": {"type": "string"},
        },
        "required": ["action", "args"],
    }


def as_action_text(reply: str) -> str:
    """The reply in the text protocol's canonical form; a reply that is not such an object is given back as it is
    (the pipeline then says what is wrong with it, as for any reply)."""
    try:
        obj = json.loads(reply)
    except (ValueError, RecursionError):
        return reply
    if not (isinstance(obj, dict) and isinstance(obj.get("action"), str) and isinstance(obj.get("args", {}), dict)):
        return reply
    line = f"Action: {obj['action']} {json.dumps(obj.get('args', {}), ensure_ascii=False)}"
    body = obj.get("body")
    if not isinstance(body, str) or not body.strip():
        return line
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", body)), default=0))
    return f"{line}\n{fence}python\n{body.rstrip()}\n{fence}"


def example_json(example: str) -> str:
    """A text-protocol example (`Action: NAME {args}` and a fenced body) as the JSON reply that means the same."""
    m = STRICT_LINE.search(example)  # the strict parser's own action line
    if not m:
        return example
    obj = {"action": m.group(1), "args": json.loads(m.group(2))}
    body = first_fence(example[m.end():], closed_only=True)
    if body is None and "SEARCH" in example[m.end():]:
        body = example[m.end():].strip("\n")
    if body is not None:
        obj["body"] = body
    return json.dumps(obj, ensure_ascii=False)
