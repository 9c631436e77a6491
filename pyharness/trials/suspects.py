"""fix mode's candidates: the suspect functions (named in the failing traceback, or run by the failing test),
asked for with the failing test, its traceback, the constants they use and the traced condition values, and
merged back by name (methods too, with their indentation)."""

import ast
import difflib
import re
import textwrap
from dataclasses import dataclass, field

from pyharness.harness.prose import prose_edit
from pyharness.localise.filerank import focus, test_source
from pyharness.localise.linetrace import RunTrace
from pyharness.trials.candidates import Framing, Target, extract_code
from pyharness.trials.prompts import Attempt, FixEvidence, fix_message
from pyharness.trials.taskchecks import CallCheck
from pyharness.workspace.noise import truncate
from pyharness.workspace.testrun import head_tail
from pyharness.workspace.tree import Workspace

CALLED = re.compile(r"\b([A-Za-z_]\w*)\(")
NAME = re.compile(r"[A-Za-z_]\w*")
ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*])\s+", re.MULTILINE)
"""Where a guess starts in a reply: a numbered or bulleted item."""
FENCED = re.compile(r"```[A-Za-z0-9_+-]*[^\n]*\n(.*?)```", re.DOTALL)
MAX_UNITS, MAX_UNIT_LINES = 2, 60
MAX_TRACEBACK_CHARS, MAX_CONSTANT_CHARS = 6000, 3000
"""A traceback (pytest prints a whole huge repr) and each constant shown beside the suspects (a lookup table can be
thousands of lines) are cut to their head and tail, so a candidate prompt fits the model's context (a guard for huge
output: the constants real suspects use are far shorter)."""


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


class FixTarget(Target):
    """fix mode: a candidate rewrites the suspect function(s), merged by name; the whole suite decides."""

    noun = "function"

    def __init__(self, ws: Workspace, failing: str, error: str, traceback: str, ran: RunTrace | None):
        self.failing, self.error = failing, error
        self.traceback = head_tail(traceback, MAX_TRACEBACK_CHARS)  # one huge repr can fill the whole context
        self.units = suspects(ws, traceback, ran or RunTrace(), failing)
        self.constants = _constants(ws, self.units)
        self.test = test_source(ws, failing)
        self.checks: list[CallCheck] = []

    def message(self, framing: Framing, best: Attempt | None, history: list[str]) -> str:
        """The one user message of a candidate's prompt (`prompts.fix_message`)."""
        stubs = "\n\n".join(f"# {u.path}" + (f" (a method of class {u.name.rsplit('.', 1)[0]})" if "." in u.name
                                                else "") + f"\n{stub_of(u.code)}" for u in self.units)
        evidence = FixEvidence(self.failing, self.test, self.traceback,
                               "\n\n".join(f"# {u.path}\n{u.code.rstrip()}" for u in self.units), stubs,
                               self.constants, [n for u in self.units for n in u.notes])
        return fix_message(evidence, framing.kind, best, history)

    def extract(self, reply: str, framing: Framing, ws: Workspace) -> str | None:
        r"""The candidate's code in a reply; for a `line` reply, the suspect function with the line it names
        changed as it says (`change \`if n > LIMIT:\` to \`if n >= LIMIT:\``)."""
        if framing.kind == "line":
            sources = {u.path: ws.read_text(u.path) for u in self.units}
            code = self._with_line(prose_edit(reply, sources), sources)
            if code:
                return code
        return extract_code(reply)

    def _with_line(self, said: tuple[str, int, str] | None, sources: dict[str, str]) -> str | None:
        """The suspect function holding line `said[1]` of `said[0]`, with that line replaced by `said[2]`."""
        unit = next((u for u in self.units if said and u.path == said[0] and u.start <= said[1] <= u.end), None)
        if unit is None:
            return None
        lines = sources[unit.path].splitlines()
        lines[said[1] - 1] = said[2]
        return textwrap.dedent("\n".join(lines[unit.start - 1:unit.end])) + "\n"

    def extract_all(self, reply: str, framing: Framing, ws: Workspace) -> list[str]:
        """Every candidate in a reply: for `guesses`, the suspect function with one line changed for each guess
        (a numbered item quoting a line and its change, or a short fenced line close to one of the function's),
        and a whole function if one is fenced; otherwise the one `extract` finds. In order, distinct, at most 3."""
        if framing.kind != "guesses":
            code = self.extract(reply, framing, ws)
            return [] if code is None else [code]
        sources = {u.path: ws.read_text(u.path) for u in self.units}
        edits = [prose_edit(" ".join(chunk.split()), sources) for chunk in ITEM.split(reply)]
        for block in FENCED.findall(reply):
            if "def " not in block:
                edits += [self._closest(line, sources) for line in block.strip().splitlines()[:3]]
        found = [code for code in (self._with_line(said, sources) for said in edits) if code]
        whole = extract_code(reply)
        if whole and "def " in whole:
            found.append(whole)
        return list(dict.fromkeys(found))[:3]

    def _closest(self, new: str, sources: dict[str, str]) -> tuple[str, int, str] | None:
        """(path, line, new line) for a corrected line given alone: the one suspect line it is closest to (a
        changed line, similar enough, and no other line as close)."""
        new = new.strip()
        scored = sorted(((difflib.SequenceMatcher(None, line.strip(), new).ratio(), u.path, n, line)
                         for u in self.units for n, line in enumerate(sources[u.path].splitlines(), 1)
                         if u.start <= n <= u.end and line.strip()), reverse=True)
        if not new or not scored or scored[0][0] < 0.75 or scored[0][3].strip() == new or \
                len(scored) > 1 and scored[1][0] == scored[0][0]:
            return None
        _, path, number, line = scored[0]
        return path, number, line[:len(line) - len(line.lstrip())] + new

    def apply(self, code: str, ws: Workspace) -> dict[str, str]:
        """The suspect files with each function of `code` put in place of its namesake; {} if none matched. A
        method given inside its class goes to that class's method; suspects sharing a name (`LRU.get`,
        `Counter.get`) each take the reply's function of that name most like their own code, one each."""
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError):
            return {}
        lines = code.splitlines()
        given: dict[str, str] = {}
        """qualified name (Class.method, or the name alone) -> code, the first of each"""
        alike: dict[str, list[str]] = {}
        """short name -> the code of each function of that name"""
        for node, qual in _functions(tree):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            body = textwrap.dedent("\n".join(lines[first - 1:node.end_lineno]))
            given.setdefault(qual, body)
            alike.setdefault(node.name, []).append(body)
        chosen = {n: given[u.name] for n, u in enumerate(self.units) if "." in u.name and u.name in given}
        for short in alike:  # a method that went to its own class is no one else's
            alike[short] = [c for c in alike[short] if c not in chosen.values()]
        for short, codes in alike.items():
            if not codes:
                continue
            namesakes = [n for n, u in enumerate(self.units) if n not in chosen and u.name.rsplit(".", 1)[-1] == short]
            if len(namesakes) == 1:
                chosen[namesakes[0]] = codes[0]
                continue
            pairs = sorted(((difflib.SequenceMatcher(None, self.units[n].code, c).ratio(), n, k)
                            for n in namesakes for k, c in enumerate(codes)), reverse=True)
            used: set[int] = set()
            for _, n, k in pairs:  # each function of the reply to the namesake it is most like, one each
                if n not in chosen and k not in used:
                    chosen[n] = codes[k]
                    used.add(k)
        files: dict[str, list[str]] = {}
        for n, unit in sorted(enumerate(self.units), key=lambda item: -item[1].start):
            if n not in chosen:
                continue
            body = files.setdefault(unit.path, ws.read_text(unit.path).splitlines())
            body[unit.start - 1:unit.end] = textwrap.indent(chosen[n], unit.indent).splitlines()
        return {path: "\n".join(body) + "\n" for path, body in files.items()}


def stub_of(code: str) -> str:
    """A function's decorators, signature and docstring with its body left out (`...` in its place)."""
    try:
        node = ast.parse(code).body[0]
    except (SyntaxError, ValueError, IndexError):
        return code
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return code
    lines = code.splitlines()
    first = node.body[0]
    has_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value,
                                                                                                   str)
    keep = lines[:first.end_lineno] if has_doc else lines[:first.lineno - 1]
    indent = re.match(r"\s*", lines[first.lineno - 1]).group(0) or "    "
    return "\n".join(keep + [f"{indent}..."])


def suspects(ws: Workspace, traceback: str, ran: RunTrace, failing: str = "") -> list[Unit]:
    """Functions of non-test files that the failing test reached, at most MAX_UNITS. With a spectrum
    (`ran.scores`), the most suspicious first (the highest score of a line in them; then those the traceback or
    the failing test's source names, or whose class it names; then more lines run); without one, those named in
    the traceback first, then those whose lines ran (innermost first). A function longer than MAX_UNIT_LINES
    (docstring not counted) is left out."""
    named = list(dict.fromkeys(CALLED.findall(traceback)))
    mentioned = set(NAME.findall(test_source(ws, failing))) | set(named) if failing else set(named)
    found: list[tuple[tuple, Unit]] = []
    for rel in focus(ws, traceback, extra=list(dict.fromkeys([*ran.lines, *ran.scores]))):  # a small tree: all
        source = ws.read_text(rel)
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            continue
        lines, marks, notes = source.splitlines(), ran.lines.get(rel, set()), ran.notes.get(rel, {})
        scores = ran.scores.get(rel, {})
        for node, qual in _functions(tree):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            end = node.end_lineno or node.lineno
            span = set(range(node.body[0].lineno, end + 1))
            in_tb = node.name in named
            if not (in_tb or marks & span or scores.keys() & span) or _code_lines(node) > MAX_UNIT_LINES:
                continue
            indent = re.match(r"\s*", lines[first - 1]).group(0)
            code = textwrap.dedent("\n".join(lines[first - 1:end]))
            said = [f"- line `{lines[n - 1].strip()}` saw {notes[n]}" for n in sorted(span & marks) if n in notes]
            if ran.scores:
                known = node.name in mentioned or qual.split(".")[0] in mentioned
                rank: tuple = (-max((scores.get(n, 0.0) for n in span), default=0.0), not known,
                               -len(marks & span))
            else:
                rank = (0 if in_tb else 1, named.index(node.name) if in_tb else -len(marks & span))
            found.append((rank, Unit(rel, qual, first, end, indent, code, said)))
    return [unit for _, unit in sorted(found, key=lambda item: item[0])][:MAX_UNITS]


def _code_lines(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's length in lines, its docstring left out."""
    length = (node.end_lineno or node.lineno) - node.lineno + 1
    doc = node.body[0]
    if isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) and isinstance(doc.value.value, str):
        length -= (doc.end_lineno or doc.lineno) - doc.lineno + 1
    return length


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
                out.append(truncate(f"{path}: {ast.get_source_segment(source, node)}", MAX_CONSTANT_CHARS))
    return out[:8]
