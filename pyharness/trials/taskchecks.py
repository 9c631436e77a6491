"""Checks read from a task's own text: doctest `>>>` lines and prose examples ("f(x) == y", "f(x) ➞ y").

A visible example is a weak judge (a program can pass it and fail hidden cases; a stub passes an example
that expects None). The examples a task states in its text are free extra checks: the trials run them beside
the given example to choose among candidates and to decide when one is good enough.
"""

import ast
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyharness.workspace.procs import clean_env, run_once

ARROW = re.compile(r"\s*(?:==>|==|=>|->|→|➞|=(?!=)|should return|should be|returns|return|gives|is)\s*",
                   re.IGNORECASE)
FOR_ARGS = re.compile(r"\bfor (.+?),? the (?:result|output|answer) (?:should be|is|will be)\s*(.+)$", re.IGNORECASE)
INPUT = re.compile(r"^\s*Input\s*:\s*(.+)$", re.IGNORECASE)
OUTPUT = re.compile(r"^\s*Output\s*:\s*(.+)$", re.IGNORECASE)
WORDS = {"true": "True", "false": "False", "null": "None", "none": "None"}

RUNNER = r"""
import ast, json, sys
source, checks = json.load(sys.stdin)
ns = {"__name__": "__ph_check__"}
out = []
try:
    exec(compile(source, "main.py", "exec"), ns)
except BaseException as exc:
    print(json.dumps([[False, f"main.py does not run: {type(exc).__name__}: {exc}"] for _ in checks]))
    sys.exit(0)
for call, expected in checks:
    try:
        got = eval(call, ns)
    except BaseException as exc:
        out.append([False, f"{call} raised {type(exc).__name__}: {exc}"])
        continue
    try:
        want = ast.literal_eval(expected)
        ok = got == want and isinstance(got, bool) == isinstance(want, bool)
    except (ValueError, SyntaxError):
        ok = repr(got) == expected
    out.append([bool(ok), "" if ok else f"{call} returned {got!r}, expected {expected}"])
print(json.dumps(out))
"""


@dataclass(frozen=True)
class CallCheck:
    """`call` evaluated after main.py runs must equal `expected` (a Python literal, or compared by repr)."""

    call: str
    expected: str


@dataclass
class CheckResult:
    """How a program did on the task's stated examples."""

    passed: int
    total: int
    failure: str = ""
    """The first failing check in words ('' when all pass)."""


def function_names(source: str) -> list[str]:
    """Top-level function names of a code block (in order)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]


def read_checks(text: str, names: list[str], literal_args: bool = True) -> list[CallCheck]:
    """The examples of calls to `names` stated in `text`: `>>> f(x)` + its output line, and `f(x) == y` prose.
    With `literal_args` off, arguments may be any expression (`date(2024, 1, 1)`)."""
    if not names:
        return []
    found: list[CallCheck] = []
    lines = text.splitlines()
    for n, line in enumerate(lines):
        stripped = line.strip()
        following = lines[n + 1].strip() if n + 1 < len(lines) else ""
        if stripped.startswith(">>>"):
            stripped = stripped[3:].strip()
            if following and not following.startswith(">>>"):
                _add(found, literal_args, stripped, following, names)
        if len(names) == 1:
            given, wanted = INPUT.match(line), OUTPUT.match(following)
            if given and wanted:  # "Input: [4,2,3]" then "Output: [2, 1]"
                _add(found, literal_args, f"{names[0]}({given.group(1).strip()})", wanted.group(1), names)
            said = FOR_ARGS.search(stripped)
            if said:  # 'For s = "abcde", c = "ae", the result should be ('bcd',False)'
                value = _literal_prefix(_words(said.group(2)))
                _add(found, literal_args, f"{names[0]}({said.group(1).strip()})", value, names)
        for name in names:
            for m in re.finditer(rf"\b{re.escape(name)}\(", stripped):
                end = _closing(stripped, m.end() - 1)
                if end is None:
                    continue
                arrow = ARROW.match(stripped, end + 1)
                if arrow:
                    value = _literal_prefix(_words(stripped[arrow.end():]))
                    if value:
                        _add(found, literal_args, stripped[m.start():end + 1], value, names)
    return list(dict.fromkeys(found))


def _words(text: str) -> str:
    """`true`/`false`/`null` as Python spells them (prose examples often use the JSON words)."""
    word = re.match(r"\s*([A-Za-z]+)\b", text)
    if word and word.group(1).lower() in WORDS:
        return WORDS[word.group(1).lower()] + text[word.end():]
    return text


def _add(found: list[CallCheck], literal_args: bool, call: str, expected: str, names: list[str]) -> None:
    """Keep a check only when it is a call of the task's function with literal arguments and a literal value."""
    expected = _words(expected.strip().rstrip(".,;"))
    try:
        tree = ast.parse(call.strip(), mode="eval")
        ast.literal_eval(expected)
        body = tree.body
        if not (isinstance(body, ast.Call) and getattr(body.func, "id", "") in names):
            return
        for arg in [*body.args, *(k.value for k in body.keywords)] if literal_args else []:
            ast.literal_eval(arg)
    except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
        return
    found.append(CallCheck(ast.unparse(body), expected))


def _closing(text: str, open_at: int) -> int | None:
    """Index of the bracket closing the one at `open_at` (strings skipped), or None."""
    depth, quote = 0, ""
    for i in range(open_at, len(text)):
        c = text[i]
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _literal_prefix(text: str) -> str:
    """The longest prefix of `text` that is a Python literal (the value after `==` in a prose example)."""
    text = text.strip()
    for end in range(len(text), 0, -1):
        piece = text[:end].rstrip(".,; ")
        if not piece:
            break
        try:
            ast.literal_eval(piece)
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            continue
        return piece
    return ""


def run_checks(source: str, checks: list[CallCheck], timeout: float = 10.0) -> CheckResult:
    """Run `source` once in a subprocess and evaluate every check in it."""
    if not checks:
        return CheckResult(0, 0)
    with tempfile.TemporaryDirectory(prefix="ph-checks-") as tmp:
        try:
            proc = run_once([sys.executable, "-c", RUNNER], stdin=json.dumps([source, [
                [c.call, c.expected] for c in checks]]), timeout=timeout, cwd=Path(tmp), env=clean_env())
            rows = json.loads(proc.stdout.strip().splitlines()[-1]) if proc.stdout.strip() else []
        except subprocess.TimeoutExpired:
            return CheckResult(0, len(checks), f"the task's examples did not finish within {timeout:g} s")
        except (json.JSONDecodeError, IndexError):
            rows = []
    if len(rows) != len(checks):
        return CheckResult(0, len(checks), "main.py could not be checked on the task's examples")
    failures = [why for ok, why in rows if not ok]
    return CheckResult(len(checks) - len(failures), len(checks), failures[0] if failures else "")


def stub_of(source: str) -> str:
    """The code with every function body replaced by `pass` (what a model that copies the prompt writes)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return source
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            node.body = [ast.Pass()]
    return ast.unparse(tree) + "\n"
