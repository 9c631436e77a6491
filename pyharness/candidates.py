"""What search asks the model for, and how a reply becomes files: the whole main.py (stdout) or the suspect
functions (fix), requested in a plain code-only form instead of the action protocol.

A 1.5B model asked "complete this function, reply in one python block" does far better than the same model
inside an action protocol (27 vs 15 of 35 HumanEval problems, FIELD-NOTES.md), so where the harness knows
what it wants it asks for exactly that and turns the code into the write or edit itself.
"""

import ast
import re
import textwrap
from dataclasses import dataclass, field

from pyharness.harness.parse import first_fence
from pyharness.linetrace import RunTrace
from pyharness.taskchecks import CallCheck, function_names, read_checks
from pyharness.workspace import Workspace

PROTOCOL_SENTENCE = re.compile(r"\s*(?:The|Use the) run_tests action[^\n]*", re.IGNORECASE)
CALLED = re.compile(r"\b([A-Za-z_]\w*)\(")
MAX_UNITS, MAX_UNIT_LINES = 3, 60


@dataclass
class Framing:
    """One way of asking: `plain` (the task, code only), `plan` (a short plan, then code), `repair` (the best
    attempt so far with its one failure)."""

    kind: str
    temperature: float


def parse_schedule(spec: str) -> list[Framing]:
    """`plain@0,repair@0,plain@0.8` -> framings (kind@temperature)."""
    out = []
    for part in spec.split(","):
        kind, _, temp = part.strip().partition("@")
        if kind not in ("plain", "plan", "repair"):
            raise ValueError(f"unknown framing {kind!r} in the search schedule (plain, plan, repair)")
        out.append(Framing(kind, float(temp or 0)))
    return out


@dataclass
class Attempt:
    """The code of an earlier candidate and what its check said, for a repair prompt."""

    code: str
    failure: str


def extract_code(reply: str) -> str | None:
    """The code of a code-only reply: its first fenced block, or the whole reply when that parses as Python."""
    fenced = first_fence(reply)
    if fenced is not None and fenced.strip():
        return fenced.strip("\n") + "\n"
    text = reply.strip()
    if text and "\n" in text:
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return None
        return text + "\n"
    return None


class StdoutTarget:
    """stdout tasks: a candidate is the whole main.py (a program, or a function for function tasks)."""

    def __init__(self, task: str):
        self.task = PROTOCOL_SENTENCE.sub("", task).strip()
        fence = first_fence(task, closed_only=True) or ""
        self.function = fence if "def " in fence else ""
        self.names = function_names(self.function)
        self.checks: list[CallCheck] = read_checks(self.function, self.names) if self.function else []
        self.noun = "function" if self.function else "program"

    def message(self, framing: Framing, best: Attempt | None, history: list[str]) -> str:
        """The one user message of a candidate's prompt (the task first, so the prefix is shared and cached)."""
        if self.function:
            head = ("Complete the following Python function. Reply with the whole function in one ```python block."
                    f"\n\n```python\n{self.function.rstrip()}\n```")
        else:
            head = f"{self.task}\n\nReply with the complete Python program in one ```python block."
        if framing.kind == "plan":
            return (f"{head}\n\nFirst write a short plan (at most 4 numbered lines) of how to get the exact output, "
                    f"then the complete {self.noun} in one ```python block.")
        if framing.kind == "repair" and best is not None:
            earlier = "".join(f"\n{line}" for line in history[-3:])
            return (f"{head}\n\nThis {self.noun} was tried:\n```python\n{best.code.rstrip()}\n```\n"
                    f"It fails: {best.failure}{earlier}\n\nFind the mistake and reply with the corrected complete "
                    f"{self.noun} in one ```python block.")
        return head

    def apply(self, code: str, ws: Workspace) -> dict[str, str]:
        """main.py's new content (a function task keeps only imports, definitions and assignments)."""
        return {"main.py": _definitions_only(code) if self.function else code}


@dataclass
class Unit:
    """A function (or method) fix-mode candidates may rewrite: where it is and its code."""

    path: str
    name: str
    start: int
    end: int
    indent: str
    code: str
    """Dedented source, decorators included."""
    notes: list[str] = field(default_factory=list)


class FixTarget:
    """fix mode: a candidate rewrites the suspect function(s), merged by name; the whole suite decides."""

    noun = "function"

    def __init__(self, ws: Workspace, failing: str, error: str, traceback: str, ran: RunTrace | None):
        self.failing, self.error, self.traceback = failing, error, traceback
        self.units = suspects(ws, traceback, ran or RunTrace())
        self.constants = _constants(ws, self.units)
        self.checks: list[CallCheck] = []

    def message(self, framing: Framing, best: Attempt | None, history: list[str]) -> str:
        """The one user message of a candidate's prompt (the same head every time, so it stays cached)."""
        code = "\n\n".join(f"# {u.path}\n{u.code.rstrip()}" for u in self.units)
        notes = [n for u in self.units for n in u.notes]
        seen = ("\n\nWhile the failing test ran:\n" + "\n".join(notes)) if notes else ""
        consts = ("\n\nConstants it uses:\n" + "\n".join(self.constants)) if self.constants else ""
        head = (f"A test fails: {self.failing}\n{self.traceback.strip()}\n\nThe code it runs:\n```python\n{code}\n```"
                f"{consts}{seen}\n\nThe tests are right; the code has a bug.")
        if framing.kind == "plan":
            return (f"{head} First say in one line which line is wrong and why, then reply with the corrected "
                    "function(s) in one ```python block (whole functions, nothing else).")
        if framing.kind == "repair" and best is not None:
            earlier = "".join(f"\n{line}" for line in history[-3:])
            return (f"{head}\n\nThis version was tried:\n```python\n{best.code.rstrip()}\n```\nWith it: "
                    f"{best.failure}{earlier}\n\nFind the wrong line and reply with the corrected function(s) in one "
                    "```python block (whole functions, nothing else).")
        return f"{head} Find the wrong line and reply with the corrected function(s) in one ```python block " \
               "(whole functions, nothing else)."

    def apply(self, code: str, ws: Workspace) -> dict[str, str]:
        """The suspect files with each function of `code` put in place of its namesake; {} if none matched."""
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return {}
        lines = code.splitlines()
        given: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name not in given:
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                given[node.name] = textwrap.dedent("\n".join(lines[first - 1:node.end_lineno]))
        files: dict[str, list[str]] = {}
        for unit in sorted(self.units, key=lambda u: -u.start):
            short = unit.name.rsplit(".", 1)[-1]
            if short not in given:
                continue
            body = files.setdefault(unit.path, ws.read_text(unit.path).splitlines())
            body[unit.start - 1:unit.end] = textwrap.indent(given[short], unit.indent).splitlines()
        return {path: "\n".join(body) + "\n" for path, body in files.items()}


def suspects(ws: Workspace, traceback: str, ran: RunTrace) -> list[Unit]:
    """Functions of non-test files that the failing test reached: named in its traceback first, then those
    whose lines ran in it (innermost first); at most MAX_UNITS."""
    named = list(dict.fromkeys(CALLED.findall(traceback)))
    found: list[tuple[tuple, Unit]] = []
    for rel in ws.files():
        if not rel.endswith(".py") or ws.is_test_path(rel):
            continue
        source = ws.read_text(rel)
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        lines, marks, notes = source.splitlines(), ran.lines.get(rel, set()), ran.notes.get(rel, {})
        for node, qual in _functions(tree):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            span = set(range(node.lineno + 1, end + 1))
            in_tb = node.name in named
            if not (in_tb or marks & span) or end - first > MAX_UNIT_LINES:
                continue
            indent = re.match(r"\s*", lines[first - 1]).group(0)
            code = textwrap.dedent("\n".join(lines[first - 1:end]))
            said = [f"- line `{lines[n - 1].strip()}` saw {notes[n]}" for n in sorted(span & marks) if n in notes]
            rank = (0 if in_tb else 1, named.index(node.name) if in_tb else -len(marks & span))
            found.append((rank, Unit(rel, qual, first, end, indent, code, said)))
    return [unit for _, unit in sorted(found, key=lambda item: item[0])][:MAX_UNITS]


def _functions(tree: ast.Module):
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield node, node.name
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    yield item, f"{node.name}.{item.name}"


def _constants(ws: Workspace, units: list[Unit]) -> list[str]:
    """Module-level `NAME = value` lines of the suspects' files that the suspects use."""
    out = []
    for path in dict.fromkeys(u.path for u in units):
        source = ws.read_text(path)
        used = {n.id for u in units if u.path == path for n in ast.walk(ast.parse(u.code)) if isinstance(n, ast.Name)}
        for node in ast.parse(source).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id in used for t in node.targets):
                out.append(f"{path}: {ast.get_source_segment(source, node)}")
    return out[:8]


def _definitions_only(code: str) -> str:
    """A function task's main.py: imports, definitions and assignments kept; prints, asserts and a
    `__main__` block dropped (they would print into the checked output)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError):
        return code
    keep = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Assign,
            ast.AnnAssign)
    lines = code.splitlines()
    drop = [n for n in tree.body if not isinstance(n, keep)
            and not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    if not drop:
        return code
    for node in sorted(drop, key=lambda n: -n.lineno):
        del lines[node.lineno - 1:node.end_lineno]
    return "\n".join(lines).rstrip() + "\n"
