"""parse: find the one action in a model reply, in whichever of the shapes small models emit."""

import ast
import json
import re
from dataclasses import dataclass, field

import json_repair

SPECIAL_TOKENS = re.compile(r"<\|(?:im_end|im_start|endoftext|eot_id|end|assistant)\|>")
ACTION_LINE = re.compile(r"^[ \t>*`#]*(?:\*\*)?Action(?:\*\*)?\s*:\s*(?:\*\*)?`?([A-Za-z_][\w.\-]*)`?", re.MULTILINE | re.IGNORECASE)
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
FENCE = re.compile(r"^[ \t]*```([\w+\-.]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
OPEN_FENCE = re.compile(r"^[ \t]*```([\w+\-.]*)[^\n]*\n(.*)\Z", re.MULTILINE | re.DOTALL)
CALL = re.compile(r"^[ \t]*`?([A-Za-z_][\w.]*)\((.*)", re.MULTILINE)
BARE_NAME = re.compile(r"^[ \t]*(?:[*+\-]|\d{1,2}[.)])?[ \t]*([A-Za-z_][\w.]*)(?=[ \t]*\{|[ \t]*$)", re.MULTILINE)
NEXT_ACTION = re.compile(r"^[ \t>*`#+\-]*(?:\d{1,2}[.)][ \t]*)?(?:\*\*)?(?:Action(?:\*\*)?\s*:|([A-Za-z_][\w.]*)[ \t]*[{(])",
                         re.MULTILINE | re.IGNORECASE)
ARGS_LINE = re.compile(r"^\s*(?:Args|Arguments|Action[ _]Input|Input|Parameters)\s*:\s*", re.IGNORECASE)
OBSERVATION = re.compile(r"^\s*Observation\s*:", re.MULTILINE | re.IGNORECASE)
NAME_KEYS = ("tool", "name", "function", "action", "tool_name", "command")
ARG_KEYS = ("arguments", "args", "parameters", "params", "action_input", "input", "tool_input")


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


def clean(reply: str) -> str:
    """Drop chat-template tokens and anything after a quoted Observation (tool output is never an action)."""
    text = SPECIAL_TOKENS.sub("", reply)
    cut = OBSERVATION.search(text)
    return text[:cut.start()] if cut else text


def find_calls(text: str, known: set[str]) -> list[RawCall]:
    """Every action-like thing in the text, in order of position."""
    calls = []
    for m in ACTION_LINE.finditer(text):
        calls.append(_action_line(text, m, known))
    for m in BARE_NAME.finditer(text):
        taken = any(c.start <= m.start() < _end_of(c, text) for c in calls)
        if _norm(m.group(1)) in known and not taken and not _inside_fence(text, m.start()):
            call = _action_line(text, m, known)
            call.fixes.insert(0, ("parse.bare_name", m.group(1)))
            calls.append(call)
    for m in TOOL_CALL.finditer(text):
        call = _object_call(m.group(1), m.start(), "parse.tool_call_tag")
        if call:
            call.end = m.end()
            calls.append(call)
    for m in FENCE.finditer(text):
        if m.group(1).lower() in ("json", "tool_call", "") and m.group(2).lstrip().startswith("{"):
            if any(c.start <= m.start() < _end_of(c, text) for c in calls):
                continue
            call = _object_call(m.group(2), m.start(), "parse.json_fence")
            if call:
                call.end = m.end()
                calls.append(call)
    for m in CALL.finditer(text):
        name = m.group(1)
        if _norm(name) in known and not any(c.start <= m.start() < _end_of(c, text) for c in calls):
            if _inside_fence(text, m.start()) and _norm(name) not in ("run_tests", "done"):
                continue
            call = _call_syntax(text, m, known)
            if call:
                calls.append(call)
    if not calls:
        stripped = text.strip()
        if stripped.startswith("{"):
            call = _object_call(stripped, text.find("{"), "parse.bare_json")
            if call:
                calls.append(call)
    return sorted(calls, key=lambda c: c.start)


def _norm(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.split(".")[-1]).lower().replace("-", "_")
    return name


def _end_of(call: RawCall, text: str) -> int:
    return max(call.end, call.start + 1)


def _inside_fence(text: str, pos: int) -> bool:
    return text.count("```", 0, pos) % 2 == 1


def _action_line(text: str, m: re.Match, known: set[str]) -> RawCall:
    call = RawCall(name=m.group(1), start=m.start())
    rest = text[m.end():]
    if rest.startswith("("):
        inner, consumed = _balanced(rest, "(", ")")
        call.args, call.positional = _call_args(inner or "", call.fixes)
        call.fixes.append(("parse.call_syntax", m.group(1)))
        rest = rest[consumed:]
    else:
        line_end = rest.find("\n")
        line = rest if line_end == -1 else rest[:line_end]
        after = "" if line_end == -1 else rest[line_end + 1:]
        args_at = line.find("{")
        if args_at == -1 and ARGS_LINE.match(after or ""):
            start = ARGS_LINE.match(after).end()
            rest = after[start:]
            args_at = rest.find("{") if rest.lstrip().startswith("{") else -1
            line = rest
            call.fixes.append(("parse.args_line", ""))
        if args_at != -1:
            src = line[args_at:] if line is not rest else rest[args_at:]
            if line is not rest:
                src = rest[rest.find("{"):]
            obj, consumed = _balanced(src, "{", "}")
            call.args = _loads(obj if obj is not None else src, call.fixes)
            rest = src[consumed:] if obj is not None else ""
        else:
            rest = after
    call.body = _body(rest, known)
    call.end = len(text) - len(rest) + _next_action(rest, known)
    return call


def _body(rest: str, known: set[str]) -> str | None:
    """The block after the action, up to the next action: a fenced block's inside, or raw SEARCH/REPLACE text."""
    rest = rest[:_next_action(rest, known)]
    if "<<<<<<<" in rest or ">>>>>>>" in rest:
        return rest.strip("\n").removeprefix("```").strip("\n") if "```" not in rest else _fence_inside(rest)
    return _fence_inside(rest)


def _next_action(rest: str, known: set[str]) -> int:
    """Where the next action starts (outside code fences), or the end of the text."""
    for m in NEXT_ACTION.finditer(rest):
        if (m.group(1) is None or _norm(m.group(1)) in known) and not _inside_fence(rest, m.start()):
            return m.start()
    return len(rest)


def _fence_inside(rest: str) -> str | None:
    m = FENCE.search(rest) or OPEN_FENCE.search(rest)
    return m.group(2) if m else None


def _object_call(src: str, start: int, kind: str) -> RawCall | None:
    fixes: list[tuple[str, str]] = [(kind, "")]
    obj = _loads(src, fixes)
    if not isinstance(obj, dict):
        return None
    name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
    if isinstance(obj.get("function"), dict):
        obj, name = obj["function"], obj["function"].get("name")
    if not name:
        return None
    args = next((obj[k] for k in ARG_KEYS if k in obj), None)
    if isinstance(args, str):
        args = _loads(args, fixes)
    if not isinstance(args, dict):
        args = {k: v for k, v in obj.items() if k not in NAME_KEYS}
    return RawCall(name=name, args=args, fixes=fixes, start=start)


def _call_syntax(text: str, m: re.Match, known: set[str]) -> RawCall | None:
    open_at = m.start(2) - 1
    inner, consumed = _balanced(text[open_at:], "(", ")")
    if inner is None:
        return None
    fixes = [("parse.call_syntax", m.group(1))]
    args, positional = _call_args(inner, fixes)
    rest = text[open_at + consumed:]
    return RawCall(name=m.group(1), args=args, positional=positional, fixes=fixes, start=m.start(),
                   body=_body(rest, known), end=open_at + consumed + _next_action(rest, known))


def _call_args(inner: str, fixes: list) -> tuple[dict, list]:
    if not inner.strip():
        return {}, []
    if inner.strip().startswith("{") and inner.strip().endswith("}"):
        return _loads(inner.strip(), fixes), []
    try:
        node = ast.parse(f"f({inner})", mode="eval").body
        positional = [ast.literal_eval(a) for a in node.args]
        keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
        return keywords, positional
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        fixes.append(("repair.call_args", "kept the text as one argument"))
        return {}, [inner.strip().strip("'\"")]


def _balanced(src: str, open_ch: str, close_ch: str) -> tuple[str | None, int]:
    """The text inside the first balanced open/close pair (strings, incl. triple-quoted, respected)."""
    depth, i, n = 0, 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            triple = src[i:i + 3]
            if triple in ('"""', "'''"):
                end = src.find(triple, i + 3)
                i = n if end == -1 else end + 3
                continue
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            i = j + 1
            continue
        if c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                first = src.find(open_ch)
                if open_ch == "{":
                    return src[first:i + 1], i + 1
                return src[first + 1:i], i + 1
        i += 1
    return None, n


def _loads(src: str, fixes: list) -> dict:
    """JSON arguments: strict JSON, else a Python literal (triple-quoted strings), else json-repair."""
    src = src.strip()
    if not src:
        return {}
    try:
        value = json.loads(src)
        return value if isinstance(value, dict) else {"_value": value}
    except (json.JSONDecodeError, RecursionError):
        pass
    try:
        value = ast.literal_eval(src)
        if isinstance(value, dict):
            fixes.append(("repair.python_literal", "arguments were a Python dict (e.g. a triple-quoted string)"))
            return {str(k): v for k, v in value.items()}
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        pass
    try:
        value = json_repair.loads(src)
    except (ValueError, RecursionError, IndexError, KeyError, TypeError):
        value = None
    if isinstance(value, dict):
        fixes.append(("repair.json", "repaired malformed JSON arguments"))
        return value
    return {}
