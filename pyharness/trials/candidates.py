"""What the trials ask the model for, and how a reply becomes files: the whole main.py (stdout) or the new file and
its test (add), requested in a plain code-only form instead of the action protocol (fix mode: suspects.py; the words
of every request: prompts.py).

A small model asked "complete this function, reply in one python block" does far better than the same model inside
an action protocol (docs/results.md), so where the harness knows what it wants it asks for exactly that and turns the
code into the write or edit itself.
"""

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from pyharness.harness.codemerge import definitions
from pyharness.harness.parse import first_fence
from pyharness.trials.prompts import Attempt, add_message, plain_request, stdout_message, test_request
from pyharness.trials.taskchecks import CallCheck, function_names, read_checks
from pyharness.workspace.tree import Workspace


@dataclass
class Framing:
    """One way of asking: `plain` (the task, code only), `plan` (a short plan, then code), `repair` (the best
    attempt so far with its one failure)."""

    kind: str
    temperature: float


KINDS = ("plain", "plan", "repair", "line", "spec", "guesses", "vote", "confirm", "cloze")
VOTES = ("vote", "confirm")
"""`line` (fix mode): name the wrong line and its corrected version in words; `guesses` (fix mode): three such
one-line changes in one reply, each checked as its own candidate; `spec` (fix mode): write the suspect function
anew from its signature and docstring, its buggy body not shown; elsewhere each is a plain request. `vote` is a
plain request asked only after a candidate passed (function tasks): the passing ones are then chosen among by
agreement on probe inputs (`pyharness.trials.agree`); before a pass, and where there is nothing to probe, it is skipped.
`confirm` is a vote that also ends the trials once two or more passing candidates all behave alike on the probes
(the first pass confirmed), so a doubt costs more samples only where the samples disagree. `cloze` (fix mode): the
next suspect statement masked and filled by the model (`pyharness.trials.cloze`); elsewhere a plain request."""


def parse_schedule(spec: str) -> list[Framing]:
    """`plain@0,repair@0,plain@0.8` -> framings (kind@temperature)."""
    out = []
    for part in spec.split(","):
        kind, _, temp = part.strip().partition("@")
        if kind not in KINDS:
            raise ValueError(f"unknown framing {kind!r} in the schedule ({', '.join(KINDS)})")
        try:
            out.append(Framing(kind, float(temp or 0)))
        except ValueError:
            raise ValueError(f"temperature {temp!r} of {kind} in the schedule is not a number") from None
    return out


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


class Target:
    """What every target shares: a reply's code is its first fenced block (fix mode also reads a line said in words)."""

    def extract(self, reply: str, framing: Framing, ws: Workspace) -> str | None:
        """The candidate's code in a reply."""
        return extract_code(reply)

    def extract_all(self, reply: str, framing: Framing, ws: Workspace) -> list[str]:
        """Every candidate in a reply (one, or none)."""
        code = self.extract(reply, framing, ws)
        return [] if code is None else [code]


class StdoutTarget(Target):
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
        return stdout_message(self.head, self.noun, framing.kind, best, history)

    def apply(self, code: str, ws: Workspace) -> dict[str, str]:
        """main.py's new content (a function task keeps only imports, definitions and assignments)."""
        return {"main.py": _definitions_only(code) if self.function else code}


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


class AddTarget(Target):
    """add mode, for a task that names a new file and its function: a candidate is that whole file; the test is
    the task's own examples, written by the harness (or, when the text states none it can read, by the model)."""

    noun = "file"

    def __init__(self, ws: Workspace, task: str, path: str, names: list[str]):
        self.task, self.path, self.names = task, path, names
        self.module = path[:-3].replace("/", ".")
        shown = [rel for rel in dict.fromkeys(MENTIONED.findall(task)) if rel != path and (ws.root / rel).is_file()]
        homes = {**KNOWN_NAMES, **{name: rel[:-3].replace("/", ".") for rel in shown
                                   for name in definitions(ws.read_text(rel)) or {}}}
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
        return test_request(self.task, self.context, self.test_path, self.module, self.names)

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
        return add_message(self.task, self.context, self.path, framing.kind, best, history)

    def apply(self, code: str, ws: Workspace) -> dict[str, str]:
        """The new file, and the test beside it."""
        return {self.path: code, self.test_path: self.test} if self.test else {}


def _used_names(check: CallCheck) -> set[str]:
    return {n.id for n in ast.walk(ast.parse(check.call, mode="eval")) if isinstance(n, ast.Name)}


def _resolved(check: CallCheck, names: list[str], homes: dict[str, str]) -> bool:
    """True when the example is a call of the new function whose arguments hold only data: literals, or calls of a
    name with a known home (`date(2024, 1, 1)`, a class of a file the task shows) whose own arguments hold only data.
    Attribute access, subscripts and any other expression are refused: the example becomes a test that runs, and
    task text is not trusted to run code (`os.system(...)`, `().__class__...`; docs/safety-cases.md case 74)."""
    call = ast.parse(check.call, mode="eval").body
    return isinstance(call, ast.Call) and all(_data(arg, set(names) | set(homes)) for arg in _arguments(call))


def _arguments(call: ast.Call) -> list[ast.expr]:
    return [*call.args, *(k.value for k in call.keywords)]


def _data(node: ast.expr, callables: set[str]) -> bool:
    """True when `node` is a literal, or a call of a known name with data as its arguments."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Name) and node.func.id in callables and \
            all(_data(arg, callables) for arg in _arguments(node))
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        return all(_data(e, callables) for e in node.elts)
    if isinstance(node, ast.Dict):
        return all(k is not None and _data(k, callables) for k in node.keys) and \
            all(_data(v, callables) for v in node.values)
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


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
