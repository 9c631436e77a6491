"""parse: find the one action in a model reply, in whichever of the shapes small models emit.

Code never becomes an action: lines inside ``` fences and SEARCH/REPLACE blocks are the payload of the
action before them. Work is bounded on any input (a scan budget per reply; json-repair, which is
quadratic on garbage, only on small argument texts), so a 100 KB reply still parses in milliseconds.
"""

import ast
import bisect
import json
import re
from dataclasses import dataclass, field

import json_repair

SPECIAL_TOKENS = re.compile(r"<\|(?:im_end|im_start|endoftext|eot_id|end|assistant)\|>")
ACTION_LINE = re.compile(r"^[ \t>*`#]*(?:\*\*)?Action(?:\*\*)?\s*:\s*(?:\*\*)?[ \t]*`?"
                         r"(<(?!/?tool_call>)[\w .\-]*>|[A-Za-z_][\w.\-]*)`?", re.MULTILINE | re.IGNORECASE)
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
FENCE = re.compile(r"^[ \t]*```([\w+\-.]*)[^\n]*\n(.*?)^[ \t]*```[ \t]*$", re.MULTILINE | re.DOTALL)
OPEN_FENCE = re.compile(r"^[ \t]*```([\w+\-.]*)[^\n]*\n(.*)\Z", re.MULTILINE | re.DOTALL)
CALL = re.compile(r"^[ \t]*`?([A-Za-z_][\w.]*)\((.*)", re.MULTILINE)
BARE_NAME = re.compile(r"^[ \t]*(?:[*+\-]|\d{1,2}[.)])?[ \t]*([A-Za-z_][\w.]*)(?=[ \t]*\{|[ \t]*$)", re.MULTILINE)
NEXT_ACTION = re.compile(r"^[ \t>*`#+\-]*(?:\d{1,2}[.)][ \t]*)?(?:\*\*)?(?:Action(?:\*\*)?\s*:|([A-Za-z_][\w.]*)[ \t]*"
                         r"(?:[{(]|$))", re.MULTILINE | re.IGNORECASE)
BLOCK_MARK = re.compile(r"^[ \t]*(```|<{5,9} ?SEARCH|>{5,9} ?REPLACE)([^\n]*)", re.MULTILINE)
ARGS_LINE = re.compile(r"^\s*(?:Args|Arguments|Action[ _]Input|Input|Parameters)\s*:\s*", re.IGNORECASE)
OBSERVATION = re.compile(r"^\s*Observation\s*:", re.MULTILINE | re.IGNORECASE)
NAME_KEYS = ("tool", "name", "function", "action", "tool_name", "command")
ARG_KEYS = ("arguments", "args", "parameters", "params", "action_input", "input", "tool_input")
MAX_CANDIDATES = 64
"""Per kind of call shape; a reply holding more actions than this is noise past that point."""
REPAIR_MAX, REPAIR_TOTAL = 4_000, 6_000
"""json-repair input per argument text, and per reply (its time grows with the square of bad input)."""


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


def code_blocks(text: str, *, closed_only: bool = False) -> list[tuple[int, int]]:
    """(start, end) of the inside of every ``` fence and SEARCH/REPLACE block, in order.

    As in Markdown, only a bare ``` line closes a fence; only a REPLACE marker closes a SEARCH block."""
    spans, opened, closer = [], -1, ""
    for m in BLOCK_MARK.finditer(text):
        mark = m.group(1)[0]
        if opened < 0 and mark in "`<":
            line_end = text.find("\n", m.end())
            opened, closer = (len(text) if line_end == -1 else line_end + 1), "`" if mark == "`" else ">"
        elif opened >= 0 and mark == closer and m.start() >= opened and (mark == ">" or not m.group(2).strip(" \t")):
            spans.append((opened, m.start()))
            opened = -1
    if opened >= 0 and not closed_only:
        spans.append((opened, len(text)))
    return spans


def _span_at(spans: list[tuple[int, int]], pos: int) -> tuple[int, int] | None:
    i = bisect.bisect_right(spans, pos, key=lambda span: span[0]) - 1
    return spans[i] if i >= 0 and pos < spans[i][1] else None


def clean(reply: str) -> str:
    """Drop chat-template tokens and anything after a quoted Observation (tool output is never an action).

    Both are left alone inside a closed code block: there they are part of the code."""
    spans = code_blocks(reply, closed_only=True)
    cut = next((m.start() for m in OBSERVATION.finditer(reply) if not _span_at(spans, m.start())), len(reply))
    return SPECIAL_TOKENS.sub(lambda m: m.group(0) if _span_at(spans, m.start()) else "", reply[:cut])


def find_calls(text: str, known: set[str]) -> list[RawCall]:
    """Every action-like thing in the text, in order of position."""
    return _Scan(text, known).calls()


def _norm(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.split(".")[-1]).lower().replace("-", "_")


def _limited(matches, keep):
    """The first MAX_CANDIDATES matches that `keep` accepts (checked lazily, after earlier ones were used)."""
    count = 0
    for m in matches:
        if keep(m):
            yield m
            count += 1
            if count == MAX_CANDIDATES:
                return


class _Scan:
    """One reply being searched: its code blocks located once, and the work budgets for it."""

    def __init__(self, text: str, known: set[str]):
        self.text, self.known = text, known
        self.spans = code_blocks(text)
        self.scan_budget = 4 * len(text) + 20_000
        self.repair_budget = REPAIR_TOTAL
        self.found: list[RawCall] = []

    def calls(self) -> list[RawCall]:
        text, found = self.text, self.found
        for m in _limited(ACTION_LINE.finditer(text), self._first_in_block):
            found.append(self._action_line(m))
        for m in _limited(BARE_NAME.finditer(text), lambda m: _norm(m.group(1)) in self.known and not self._taken(m)
                          and not self.inside(m.start())):
            call = self._action_line(m)
            call.fixes.insert(0, ("parse.bare_name", m.group(1)))
            found.append(call)
        for m in _limited(TOOL_CALL.finditer(text), lambda m: True):
            call = self._object_call(m.group(1), m.start(), "parse.tool_call_tag")
            if call:
                call.end = m.end()
                found.append(call)
        for m in _limited(FENCE.finditer(text), lambda m: m.group(1).lower() in ("json", "tool_call", "")
                          and m.group(2).lstrip().startswith("{") and not self._taken(m)):
            call = self._object_call(m.group(2), m.start(), "parse.json_fence")
            if call:
                call.end = m.end()
                found.append(call)
        for m in _limited(CALL.finditer(text), lambda m: _norm(m.group(1)) in self.known and not self._taken(m)):
            call = self._call_syntax(m)
            if call:
                found.append(call)
        if not found and text.strip().startswith("{"):
            call = self._object_call(text.strip(), text.find("{"), "parse.bare_json")
            if call:
                found.append(call)
        return sorted(found, key=lambda c: c.start)

    def inside(self, pos: int) -> bool:
        """True inside a code block (fence or SEARCH/REPLACE): code there is payload, not an action."""
        return _span_at(self.spans, pos) is not None

    def _first_in_block(self, m: re.Match) -> bool:
        """An Action line inside a code block is code, unless it opens the block (a fenced action)."""
        span = _span_at(self.spans, m.start())
        return span is None or not self.text[span[0]:m.start()].strip()

    def _taken(self, m: re.Match) -> bool:
        return any(c.start <= m.start() < max(c.end, c.start + 1) for c in self.found)

    def _action_line(self, m: re.Match) -> RawCall:
        text = self.text
        call = RawCall(name=m.group(1), start=m.start())
        rest = text[m.end():]
        if rest.startswith("("):
            inner, consumed = self._balanced(rest, "(", ")")
            call.fixes.append(("parse.call_syntax", m.group(1)))
            call.args, call.positional = self._call_args(inner or "", call.fixes)
            rest = rest[consumed:]
        else:
            line_end = rest.find("\n")
            line = rest if line_end == -1 else rest[:line_end]
            after = "" if line_end == -1 else rest[line_end + 1:]
            args_at = line.find("{")
            if args_at == -1 and ARGS_LINE.match(after):
                rest = after[ARGS_LINE.match(after).end():]
                args_at = 0 if rest.lstrip().startswith("{") else -1
                call.fixes.append(("parse.args_line", ""))
            elif args_at == -1:
                rest = after
            if args_at != -1:
                src = rest[rest.find("{"):]
                obj, consumed = self._balanced(src, "{", "}")
                call.args = self._loads(obj if obj is not None else src, call.fixes)
                rest = src[consumed:] if obj is not None else ""
        pos = len(text) - len(rest)
        call.end = self._next_action(pos)
        call.body = _body(text[pos:call.end])
        return call

    def _next_action(self, pos: int) -> int:
        """Where the next action starts (outside code blocks), or the end of the text."""
        while m := NEXT_ACTION.search(self.text, pos):
            span = _span_at(self.spans, m.start())
            if span:
                pos = span[1]
            elif (m.group(1) is None or _norm(m.group(1)) in self.known) and not BLOCK_MARK.match(self.text, m.start()):
                return m.start()
            else:
                pos = m.end()
        return len(self.text)

    def _object_call(self, src: str, start: int, kind: str) -> RawCall | None:
        fixes: list[tuple[str, str]] = [(kind, "")]
        obj = self._loads(src, fixes)
        name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
        if isinstance(obj.get("function"), dict):
            obj, name = obj["function"], obj["function"].get("name")
        if not name or not isinstance(name, str):
            return None
        args = next((obj[k] for k in ARG_KEYS if k in obj), None)
        if isinstance(args, str):
            args = self._loads(args, fixes)
        if not isinstance(args, dict):
            args = {k: v for k, v in obj.items() if k not in NAME_KEYS}
        return RawCall(name=name, args=args, fixes=fixes, start=start)

    def _call_syntax(self, m: re.Match) -> RawCall | None:
        open_at = m.start(2) - 1
        inner, consumed = self._balanced(self.text[open_at:], "(", ")")
        span = _span_at(self.spans, m.start())
        if inner is None or span and (self.text[span[0]:m.start()].strip()
                                      or self.text[open_at + consumed:span[1]].strip()):
            return None  # inside a code block, a call is code unless it is all the block holds
        fixes = [("parse.call_syntax", m.group(1))]
        args, positional = self._call_args(inner, fixes)
        end = self._next_action(open_at + consumed)
        return RawCall(name=m.group(1), args=args, positional=positional, fixes=fixes, start=m.start(),
                       body=_body(self.text[open_at + consumed:end]), end=end)

    def _call_args(self, inner: str, fixes: list) -> tuple[dict, list]:
        if not inner.strip():
            return {}, []
        if inner.strip().startswith("{") and inner.strip().endswith("}"):
            return self._loads(inner.strip(), fixes), []
        try:
            node = ast.parse(f"f({inner})", mode="eval").body
            positional = [ast.literal_eval(a) for a in node.args]
            keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            return keywords, positional
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            fixes.append(("repair.call_args", "kept the text as one argument"))
            return {}, [inner.strip().strip("'\"")]

    def _balanced(self, src: str, open_ch: str, close_ch: str) -> tuple[str | None, int]:
        """The text inside the first balanced open/close pair (strings, incl. triple-quoted, respected)."""
        depth, i, n = 0, 0, min(len(src), self.scan_budget)
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
                    self.scan_budget -= i
                    first = src.find(open_ch)
                    if open_ch == "{":
                        return src[first:i + 1], i + 1
                    return src[first + 1:i], i + 1
            i += 1
        self.scan_budget -= min(i, n)
        return None, len(src)

    def _loads(self, src: str, fixes: list) -> dict:
        """JSON arguments: strict JSON, else cheap repairs (raw newlines, a Python literal such as a
        triple-quoted string, a missing closing brace), else json-repair on small texts."""
        src = src.strip()
        if not src:
            return {}
        try:
            value = json.loads(src)
            return value if isinstance(value, dict) else {"_value": value}
        except (json.JSONDecodeError, RecursionError):
            pass
        closed = src if src.endswith("}") else src + "}"
        for candidate in dict.fromkeys((src, closed)):
            try:
                value = json.loads(candidate, strict=False)
                if isinstance(value, dict):
                    fixes.append(("repair.json", "repaired malformed JSON arguments"))
                    return value
            except (json.JSONDecodeError, RecursionError):
                pass
            try:
                value = ast.literal_eval(candidate)
                if isinstance(value, dict):
                    fixes.append(("repair.python_literal", "arguments were a Python dict (e.g. a triple-quoted string)"))
                    return {str(k): v for k, v in value.items()}
            except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
                pass
        if len(src) > min(REPAIR_MAX, self.repair_budget):
            return {}
        self.repair_budget -= len(src)
        try:
            value = json_repair.loads(src)
        except (ValueError, RecursionError, IndexError, KeyError, TypeError):
            value = None
        if isinstance(value, dict):
            fixes.append(("repair.json", "repaired malformed JSON arguments"))
            return value
        return {}


def _body(rest: str) -> str | None:
    """The block after the action, up to the next action: a fenced block's inside, or raw SEARCH/REPLACE text
    (raw when a marker comes before any fence: fences inside the blocks are then part of the code)."""
    marker = min((i for i in (rest.find("<<<<<<<"), rest.find(">>>>>>>")) if i != -1), default=-1)
    fence = rest.find("```")
    if marker != -1 and (fence == -1 or marker < fence):
        return rest.strip("\n")
    return _fence_inside(rest)


def _fence_inside(rest: str) -> str | None:
    m = FENCE.search(rest) or OPEN_FENCE.search(rest)
    return m.group(2) if m else None
