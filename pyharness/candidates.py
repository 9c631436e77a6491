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
from pathlib import Path

from pyharness.errors import ActionError
from pyharness.harness.parse import first_fence
from pyharness.harness.prose import prose_edit
from pyharness.linetrace import RunTrace
from pyharness.taskchecks import CallCheck, function_names, read_checks
from pyharness.workspace import Workspace

PROGRAM_ASK = ("Write the whole Python program: it reads standard input and prints only the output asked for. "
               "Reply with the complete program in one ```python block.")
FUNCTION_ASK = "Complete the following Python function. Reply with the whole function in one ```python block."
PROTOCOL_PART = re.compile(r"\n*(?:Write the whole program to main\.py|The run_tests action)[\s\S]*$")
CALLED = re.compile(r"\b([A-Za-z_]\w*)\(")
MAX_UNITS, MAX_UNIT_LINES = 2, 60


@dataclass
class Framing:
    """One way of asking: `plain` (the task, code only), `plan` (a short plan, then code), `repair` (the best
    attempt so far with its one failure)."""

    kind: str
    temperature: float


KINDS = ("plain", "plan", "repair", "line")
"""`line` (fix mode): name the wrong line and its corrected version in words; elsewhere it is a plain request."""


def parse_schedule(spec: str) -> list[Framing]:
    """`plain@0,repair@0,plain@0.8` -> framings (kind@temperature)."""
    out = []
    for part in spec.split(","):
        kind, _, temp = part.strip().partition("@")
        if kind not in KINDS:
            raise ValueError(f"unknown framing {kind!r} in the search schedule ({', '.join(KINDS)})")
        try:
            out.append(Framing(kind, float(temp or 0)))
        except ValueError:
            raise ValueError(f"temperature {temp!r} of {kind} in the search schedule is not a number") from None
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


def plain_request(task: str) -> str:
    """A stdout task asked as the model alone would be asked (protocol=oneshot sends exactly this): a function
    task's code with "complete the following function", or the task and its example with "write the program";
    the action protocol's own instructions are left out."""
    fence = first_fence(task, closed_only=True) or ""
    if "def " in fence:
        return f"{FUNCTION_ASK}\n\n```python\n{fence.strip()}\n```"
    return PROTOCOL_PART.sub("", task).rstrip() + "\n\n" + PROGRAM_ASK


class StdoutTarget:
    """stdout tasks: a candidate is the whole main.py (a program, or a function for function tasks)."""

    def __init__(self, task: str):
        self.head = plain_request(task)
        fence = first_fence(task, closed_only=True) or ""
        self.function = fence if "def " in fence else ""
        self.names = function_names(self.function)
        self.checks: list[CallCheck] = read_checks(self.function, self.names) if self.function else []
        self.noun = "function" if self.function else "program"

    def message(self, framing: Framing, best: Attempt | None, history: list[str]) -> str:
        """The one user message of a candidate's prompt (the task first, so the prefix is shared and cached)."""
        head = self.head
        if framing.kind == "plan":
            return (f"{head}\n\nFirst write a short plan (at most 4 numbered lines) of how to get the exact output, "
                    f"then the complete {self.noun} in one ```python block.")
        if framing.kind == "repair" and best is not None:
            earlier = "".join(f"\n{line}" for line in history[-3:])
            return (f"{head}\n\nThis {self.noun} was tried:\n```python\n{best.code.rstrip()}\n```\n"
                    f"It fails: {best.failure}{earlier}\n\nFind the mistake and reply with the corrected complete "
                    f"{self.noun} in one ```python block.")
        return head

    def extract(self, reply: str, framing: Framing, ws: Workspace) -> str | None:
        """The candidate's code in a reply."""
        return extract_code(reply)

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
        self.test = test_source(ws, failing)
        self.checks: list[CallCheck] = []

    def message(self, framing: Framing, best: Attempt | None, history: list[str]) -> str:
        """The one user message of a candidate's prompt (the same head every time, so it stays cached)."""
        code = "\n\n".join(f"# {u.path}\n{u.code.rstrip()}" for u in self.units)
        notes = [n for u in self.units for n in u.notes]
        seen = ("\n\nWhile the failing test ran:\n" + "\n".join(notes)) if notes else ""
        consts = ("\n\nConstants it uses:\n" + "\n".join(self.constants)) if self.constants else ""
        test = f"\n\nThe test:\n```python\n{self.test.rstrip()}\n```" if self.test else ""
        head = (f"A test fails: {self.failing}{test}\n\nIt fails with:\n{self.traceback.strip()}\n\nThe code it runs:\n"
                f"```python\n{code}\n```{consts}{seen}\n\nThe tests are right; the code has a bug.")
        if framing.kind == "plan":
            return (f"{head} First say in one line which line is wrong and why, then reply with the corrected "
                    "function(s) in one ```python block (whole functions, nothing else).")
        if framing.kind == "line":
            return (f"{head} Which line is wrong? Reply in one sentence that quotes the wrong line and then its "
                    "corrected version, each in backticks: change `the wrong line` to `the corrected line`.")
        if framing.kind == "repair" and best is not None:
            earlier = "".join(f"\n{line}" for line in history[-3:])
            return (f"{head}\n\nThis version was tried:\n```python\n{best.code.rstrip()}\n```\nWith it: "
                    f"{best.failure}{earlier}\n\nFind the wrong line and reply with the corrected function(s) in one "
                    "```python block (whole functions, nothing else).")
        return f"{head} Find the wrong line and reply with the corrected function(s) in one ```python block " \
               "(whole functions, nothing else)."

    def extract(self, reply: str, framing: Framing, ws: Workspace) -> str | None:
        r"""The candidate's code in a reply; for a `line` reply, the suspect function with the line it names
        changed as it says (`change \`if n > LIMIT:\` to \`if n >= LIMIT:\``)."""
        if framing.kind == "line":
            said = prose_edit(reply, {u.path: ws.read_text(u.path) for u in self.units})
            unit = next((u for u in self.units if said and u.path == said[0] and u.start <= said[1] <= u.end), None)
            if said and unit:
                lines = ws.read_text(unit.path).splitlines()
                lines[said[1] - 1] = said[2]
                return textwrap.dedent("\n".join(lines[unit.start - 1:unit.end])) + "\n"
        return extract_code(reply)

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


def test_source(ws: Workspace, node_id: str, max_lines: int = 40) -> str:
    """The source of a failing test (`path::name` or `path::Class::name`), or '' when it cannot be found."""
    path, _, rest = node_id.partition("::")
    names = rest.split("[")[0].split("::")
    try:
        tree = ast.parse(ws.read_text(path))
    except (OSError, SyntaxError, ValueError, ActionError):
        return ""
    body: list[ast.stmt] = tree.body
    for name in names:
        node = next((n for n in body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                     and n.name == name), None)
        if node is None:
            return ""
        body = node.body
    source = ast.get_source_segment(ws.read_text(path), node, padded=False) or ""
    lines = textwrap.dedent(source).splitlines()
    return "\n".join(lines[:max_lines]) + "\n"


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


NEW_FILE = re.compile(r"\bnew file `?([\w./-]+\.py)`?")
FUNCTION = re.compile(r"\bfunction `?([A-Za-z_]\w*)\s*\(")
MENTIONED = re.compile(r"\b([\w-]+(?:/[\w.-]+)*\.py)\b")
KNOWN_NAMES = {"date": "datetime", "datetime": "datetime", "timedelta": "datetime", "Decimal": "decimal",
               "Fraction": "fractions", "OrderedDict": "collections", "Counter": "collections"}
"""Where a name an example uses (besides the new function) comes from, for the test the harness writes."""


class AddTarget:
    """add mode, for a task that names a new file and its function: a candidate is that whole file; the test is
    the task's own examples, written by the harness (or, when the text states none it can read, by the model)."""

    noun = "file"

    def __init__(self, ws: Workspace, task: str, path: str, names: list[str]):
        self.task, self.path, self.names = task, path, names
        self.module = path[:-3].replace("/", ".")
        shown = [rel for rel in dict.fromkeys(MENTIONED.findall(task)) if rel != path and (ws.root / rel).is_file()]
        homes = {**KNOWN_NAMES, **{name: rel[:-3].replace("/", ".") for rel in shown
                                   for name in _top_level_names(ws.read_text(rel))}}
        self.checks = [c for c in read_checks(task, names, literal_args=False) if _resolved(c, names, homes)]
        stem = Path(path).stem
        self.test_path = next(p for p in (f"tests/test_{stem}.py", f"tests/test_{stem}_feature.py",
                                          f"tests/test_{stem}_ph.py") if not (ws.root / p).exists())
        self.test = example_test(self.module, self.checks, homes) if self.checks else ""
        self.context = "".join(f"\n\n{rel}:\n```python\n{ws.read_text(rel).rstrip()}\n```" for rel in shown[:2])

    @classmethod
    def parse(cls, ws: Workspace, task: str) -> "AddTarget | None":
        """The target of a task that says which new file holds which function, else None (the loop does it)."""
        path, names = NEW_FILE.search(task), FUNCTION.findall(task)
        if path is None or not names or (ws.root / path.group(1)).exists():
            return None
        return cls(ws, task, path.group(1), list(dict.fromkeys(names)))

    def test_request(self) -> str:
        """Asked once when the task states no example the harness can read: the model writes the test."""
        return (f"{self.task}{self.context}\n\nWrite a pytest test file {self.test_path} for this feature: import "
                f"with `from {self.module} import {', '.join(self.names)}` and turn each example of the task into "
                "an assert in a test function. Reply with the whole file in one ```python block.")

    def adopt_test(self, code: str) -> str:
        """The model's test made usable, or '': a definition of the new function inside the test (a small model's
        habit) is dropped and imported from the new file instead; the test must then import it and test it."""
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return ""
        lines = code.splitlines()
        own = [n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name in self.names]
        for node in sorted(own, key=lambda n: -n.lineno):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            del lines[first - 1:node.end_lineno]
        text = "\n".join(lines).strip("\n") + "\n"
        if own and f"from {self.module} import" not in text:
            text = f"from {self.module} import {', '.join(self.names)}\n" + text
        if f"from {self.module} import" not in text and f"import {self.module}" not in text or "def test" not in text:
            return ""
        return text

    def message(self, framing: Framing, best: Attempt | None, history: list[str]) -> str:
        """The one user message of a candidate's prompt (the same head every time, so it stays cached)."""
        head = f"{self.task}{self.context}\n\nWrite the whole file {self.path}."
        if framing.kind == "plan":
            return (f"{head} First write a short plan (at most 4 numbered lines), then the complete file in one "
                    "```python block.")
        if framing.kind == "repair" and best is not None:
            earlier = "".join(f"\n{line}" for line in history[-3:])
            return (f"{head}\n\nThis version was tried:\n```python\n{best.code.rstrip()}\n```\nIts test fails: "
                    f"{best.failure}{earlier}\n\nFind the mistake and reply with the corrected complete file in one "
                    "```python block.")
        return f"{head} Reply with the complete file in one ```python block."

    def extract(self, reply: str, framing: Framing, ws: Workspace) -> str | None:
        """The candidate's code in a reply."""
        return extract_code(reply)

    def apply(self, code: str, ws: Workspace) -> dict[str, str]:
        """The new file, and the test beside it."""
        return {self.path: code, self.test_path: self.test} if self.test else {}


def _top_level_names(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]


def _used_names(check: CallCheck) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(check.call, mode="eval")) if isinstance(n, ast.Name)}


def _resolved(check: CallCheck, names: list[str], homes: dict[str, str]) -> bool:
    """True when every name the example uses is the new function or has a known home to import it from."""
    return all(n in names or n in homes for n in _used_names(check))


def example_test(module: str, checks: list[CallCheck], homes: dict[str, str]) -> str:
    """A pytest file asserting each example the task states (what the user asked for, as a test)."""
    used = set().union(*(_used_names(c) for c in checks))
    names = sorted({ast.parse(c.call, mode="eval").body.func.id for c in checks})
    imports = sorted([f"from {homes[n]} import {n}" for n in used if n in homes and n not in names]
                     + [f"from {module} import {', '.join(names)}"])
    body = "\n\n\n".join(f"def test_example_{n}():\n    assert {c.call} == {c.expected}"
                         for n, c in enumerate(checks, 1))
    return ('"""The examples the task states, as tests (written by ph from the task text)."""\n\n'
            + "".join(f"{line}\n" for line in imports) + f"\n\n{body}\n")
