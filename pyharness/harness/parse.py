"""parse: find the one action in a model reply, in whichever of the shapes small models emit.

Code never becomes an action: lines inside ``` fences and SEARCH/REPLACE blocks are the payload of the
action before them. Work is bounded on any input (code blocks found in one pass, a scan budget per reply, a
capped number of candidates; see `ArgsLoader` for JSON), so a 100 KB reply still parses in milliseconds.
"""

import bisect
import functools
import itertools
import re
from typing import NamedTuple

from pyharness.harness.call import RawCall
from pyharness.harness.repair import ArgsLoader

SPECIAL_TOKENS = re.compile(r"<\|(?:im_end|im_start|endoftext|eot_id|end|assistant)\|>")
ACTION_LINE = re.compile(
    r"^[ \t>*`#]*(?:\*\*)?Action(?:\*\*)?\s*:\s*+(?:\*\*[ \t]*+)?`?"
    r"(<(?!/?tool_call>)[\w .\-]*>|[A-Za-z_][\w.\-]*)`?",
    re.MULTILINE | re.IGNORECASE,
)
TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
CALL = re.compile(r"^[ \t]*`?([A-Za-z_][\w.]*)\((.*)", re.MULTILINE)
BARE_NAME = re.compile(
    r"^[ \t]*+(?:(?:[*+\-]|\d{1,2}[.)])[ \t]*+)?([A-Za-z_][\w.]*+)(?:(?=[ \t]*+(?:\{|$))|:(?=[ \t]*+\{))", re.MULTILINE
)
"""`read {...}`, a name alone on its line, or a label `Edit: {...}` (a known action's name, checked later)."""
NEXT_ACTION = re.compile(
    r"^[ \t>*`#+\-]*(?:\d{1,2}[.)][ \t]*)?(?:\*\*)?(?:Action(?:\*\*)?\s*:|([A-Za-z_][\w.]*)[ \t]*"
    r"(?:[{(]|$))",
    re.MULTILINE | re.IGNORECASE,
)
BLOCK_MARK = re.compile(r"^[ \t]*(```|<{5,9} ?SEARCH|>{5,9} ?REPLACE)([^\n]*)", re.MULTILINE)
STRICT_LINE = re.compile(r"^Action: ([a-z_]+) (\{.*\})[ \t]*$", re.MULTILINE)
"""The canonical action line, exactly as the prompts' examples write it."""
SEARCH_REPLACE = re.compile(
    r"^[ \t]*<{5,9} ?SEARCH[^\n]*\n(.*?)^[ \t]*={5,9}[ \t]*\n(.*?)^[ \t]*>{5,9} ?REPLACE[^\n]*$",
    re.MULTILINE | re.DOTALL,
)
"""An edit's SEARCH/REPLACE block: the text to find and the text to put in its place."""
ARGS_LINE = re.compile(r"^\s*(?:Args|Arguments|Action[ _]Input|Input|Parameters)\s*:\s*", re.IGNORECASE)
OBSERVATION = re.compile(r"^[ \t]*Observation[ \t]*:", re.MULTILINE | re.IGNORECASE)
NAME_KEYS = ("tool", "name", "function", "action", "tool_name", "command")
ARG_KEYS = ("arguments", "args", "parameters", "params", "action_input", "input", "tool_input")
MAX_CANDIDATES = 64
"""Per kind of call shape; a reply holding more actions than this is noise past that point."""


class Block(NamedTuple):
    """The inside (start, end) of a ``` fence or a SEARCH/REPLACE block; its opening marker line and where it is."""

    start: int
    end: int
    opener: str
    at: int


def code_blocks(text: str, *, closed_only: bool = False) -> list[Block]:
    """Every ``` fence and SEARCH/REPLACE block, in order (an unclosed last one runs to the end of the text)."""
    return [b for b in _all_blocks(text) if not closed_only or b.end < len(text)]


@functools.lru_cache(maxsize=4)
def _all_blocks(text: str) -> tuple[Block, ...]:
    """The blocks of a text, found once: clean() and the scan of the same reply both need them."""
    return tuple(_blocks(text))


def first_fence(text: str, *, closed_only: bool = False) -> str | None:
    """The inside of the first ``` fence (unclosed: to the end of the text, unless `closed_only`)."""
    fence = next((b for b in _blocks(text) if b.opener[0] == "`"), None)
    return text[fence.start : fence.end] if fence and (not closed_only or fence.end < len(text)) else None


def _blocks(text: str):
    """One linear pass. As in Markdown, only a bare line of at least as many backticks as opened it closes a fence
    (so ```` can hold ``` fences); only a REPLACE marker closes a SEARCH block; markers of the other kind inside a
    block are its content."""
    start, ticks = -1, 0
    for m in BLOCK_MARK.finditer(text):
        mark, info = m.group(1)[0], m.group(2)
        rest = info.lstrip("`") if mark == "`" else info
        if start < 0 and mark in "`<":
            line_end = text.find("\n", m.end())
            if line_end == -1:
                return
            start, opener, at = line_end + 1, m.group(0).strip(), m.start()
            ticks = 3 + len(info) - len(rest)
        elif (
            start >= 0
            and mark == opener[0].replace("<", ">")
            and m.start() >= start
            and (mark == ">" or (3 + len(info) - len(rest) >= ticks and not rest.strip(" \t")))
        ):
            yield Block(start, m.start(), opener, at)
            start = -1
    if start >= 0:
        yield Block(start, len(text), opener, at)


def _block_at(blocks: list[Block], pos: int) -> Block | None:
    i = bisect.bisect_right(blocks, pos, key=lambda block: block.start) - 1
    return blocks[i] if i >= 0 and pos < blocks[i].end else None


def clean(reply: str) -> str:
    """Drop chat-template tokens and anything after a quoted Observation (tool output is never an action).

    Both are left alone inside a closed code block: there they are part of the code."""
    blocks = code_blocks(reply, closed_only=True)
    cut = next((m.start() for m in OBSERVATION.finditer(reply) if not _block_at(blocks, m.start())), len(reply))
    return SPECIAL_TOKENS.sub(lambda m: m.group(0) if _block_at(blocks, m.start()) else "", reply[:cut])


def find_calls(text: str, known: set[str]) -> list[RawCall]:
    """Every action-like thing in the text, in order of position."""
    return _Scan(text, known).calls()


def _norm(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.split(".")[-1]).lower().replace("-", "_")


def _limited(keep, matches):
    """The first MAX_CANDIDATES matches that `keep` accepts (checked lazily, after earlier ones were used)."""
    return itertools.islice(filter(keep, matches), MAX_CANDIDATES)


class _Scan:
    """One reply being searched: its code blocks located once, and the work budgets for it."""

    def __init__(self, text: str, known: set[str]):
        self.text, self.known = text, known
        self.blocks = code_blocks(text)
        self.scan_budget = 4 * len(text) + 20_000
        self.args = ArgsLoader()
        self.found: list[RawCall] = []

    def calls(self) -> list[RawCall]:
        text, found = self.text, self.found
        for m in _limited(self._first_in_block, ACTION_LINE.finditer(text)):
            found.append(self._action_line(m))
        for m in _limited(lambda m: self._known(m) and not self.inside(m.start()), BARE_NAME.finditer(text)):
            call = self._action_line(m)
            call.fixes.insert(0, ("parse.bare_name", m.group(1)))
            found.append(call)
        for m in _limited(None, TOOL_CALL.finditer(text)):
            call = self._object_call(m.group(1), m.start(), "parse.tool_call_tag")
            if call:
                call.end = m.end()
                found.append(call)
        for b in _limited(
            lambda b: (
                b.opener[3:].lower().split()[:1] in ([], ["json"], ["tool_call"])
                and b.opener[0] == "`"
                and text[b.start : b.end].lstrip().startswith("{")
                and b.end < len(text)
                and not self._taken(b.at)
            ),
            self.blocks,
        ):
            call = self._object_call(text[b.start : b.end], b.at, "parse.json_fence")
            if call:
                call.end = b.end + 3
                found.append(call)
        for m in _limited(self._known, CALL.finditer(text)):
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
        return _block_at(self.blocks, pos) is not None

    def _first_in_block(self, m: re.Match) -> bool:
        """An Action line inside a code block is code, unless it opens the block (a fenced action)."""
        block = _block_at(self.blocks, m.start())
        return block is None or not self.text[block.start : m.start()].strip()

    def _taken(self, pos: int) -> bool:
        return any(c.start <= pos < max(c.end, c.start + 1) for c in self.found)

    def _known(self, m: re.Match) -> bool:
        """A known action name, not inside the text of an action already found."""
        return _norm(m.group(1)) in self.known and not self._taken(m.start())

    def _action_line(self, m: re.Match) -> RawCall:
        text = self.text
        call = RawCall(name=m.group(1), start=m.start())
        rest = text[m.end() :]
        if rest.startswith("("):
            inner, consumed = self._balanced(rest, "(", ")")
            call.fixes.append(("parse.call_syntax", m.group(1)))
            call.args, call.positional = self.args.call_args(inner or "", call.fixes)
            rest = rest[consumed:]
        else:
            line_end = rest.find("\n")
            line = rest if line_end == -1 else rest[:line_end]
            after = "" if line_end == -1 else rest[line_end + 1 :]
            args_at = line.find("{")
            if args_at == -1 and ARGS_LINE.match(after):
                rest = after[ARGS_LINE.match(after).end() :]
                args_at = 0 if rest.lstrip().startswith("{") else -1
                call.fixes.append(("parse.args_line", ""))
            elif args_at == -1:
                rest = after
            if args_at != -1:
                src = rest[rest.find("{") :]
                obj, consumed = self._balanced(src, "{", "}")
                if obj is None:  # unclosed: the arguments run to the next Action line at most
                    nxt = ACTION_LINE.search(text, len(text) - len(src) + 1)
                    obj = src[: nxt.start() - (len(text) - len(src))] if nxt else src
                    consumed = len(obj)
                call.args = self.args.load(obj, call.fixes)
                rest = src[consumed:]
        pos = len(text) - len(rest)
        call.end = self._next_action(pos)
        call.body = _body(text[pos : call.end])
        return call

    def _next_action(self, pos: int) -> int:
        """Where the next action starts (outside code blocks), or the end of the text."""
        while m := NEXT_ACTION.search(self.text, pos):
            block = _block_at(self.blocks, m.start())
            if block:
                pos = block.end
            elif (m.group(1) is None or _norm(m.group(1)) in self.known) and not BLOCK_MARK.match(self.text, m.start()):
                return m.start()
            else:
                pos = m.end()
        return len(self.text)

    def _object_call(self, src: str, start: int, kind: str) -> RawCall | None:
        fixes: list[tuple[str, str]] = [(kind, "")]
        obj = self.args.load(src, fixes)
        name = next((obj[k] for k in NAME_KEYS if isinstance(obj.get(k), str)), None)
        if isinstance(obj.get("function"), dict):
            obj, name = obj["function"], obj["function"].get("name")
        if not name or not isinstance(name, str):
            return None
        args = next((obj[k] for k in ARG_KEYS if k in obj), None)
        if isinstance(args, str):
            args = self.args.load(args, fixes)
        if not isinstance(args, dict):
            args = {k: v for k, v in obj.items() if k not in NAME_KEYS}
        return RawCall(name=name, args=args, fixes=fixes, start=start)

    def _call_syntax(self, m: re.Match) -> RawCall | None:
        open_at = m.start(2) - 1
        inner, consumed = self._balanced(self.text[open_at:], "(", ")")
        block = _block_at(self.blocks, m.start())
        if (
            inner is None
            or block
            and (self.text[block.start : m.start()].strip() or self.text[open_at + consumed : block.end].strip())
        ):
            return None  # inside a code block, a call is code unless it is all the block holds
        fixes = [("parse.call_syntax", m.group(1))]
        args, positional = self.args.call_args(inner, fixes)
        end = self._next_action(open_at + consumed)
        return RawCall(
            name=m.group(1),
            args=args,
            positional=positional,
            fixes=fixes,
            start=m.start(),
            body=_body(self.text[open_at + consumed : end]),
            end=end,
        )

    def _balanced(self, src: str, open_ch: str, close_ch: str) -> tuple[str | None, int]:
        """The text inside the first balanced open/close pair (strings, incl. triple-quoted, respected)."""
        depth, i, n = 0, 0, min(len(src), self.scan_budget)
        while i < n:
            c = src[i]
            if c in "\"'":
                triple = src[i : i + 3]
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
                        return src[first : i + 1], i + 1
                    return src[first + 1 : i], i + 1
            i += 1
        self.scan_budget -= min(i, n)
        return None, len(src)


def _body(rest: str) -> str | None:
    """The block after the action, up to the next action: a fenced block's inside, or raw SEARCH/REPLACE text
    (raw when a marker comes before any fence: fences inside the blocks are then part of the code)."""
    marker = min((i for i in (rest.find("<<<<<<<"), rest.find(">>>>>>>")) if i != -1), default=-1)
    fence = rest.find("```")
    if marker != -1 and (fence == -1 or marker < fence):
        return rest.strip("\n")
    return first_fence(rest)


def edit_pairs(args: dict) -> list[tuple[str, str]]:
    """The (search, replace) pairs of an edit call's arguments: `search`/`replace`, else the SEARCH/REPLACE blocks of
    its body ([] when it has neither)."""
    if args.get("search") is not None:
        return [(args["search"], args.get("replace") or "")]
    return SEARCH_REPLACE.findall(args.get("body") or "")
