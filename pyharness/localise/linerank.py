"""Line-level fault localisation for fix mode: the statements of the repo's own code most likely to hold the bug,
each as the span of lines it covers, so a candidate can mask and rewrite one statement (cloze repair).

A line's evidence, strongest first: holding a string literal whose words the failing test's error quotes (a wrong
message: the assertion shows the text it got and the text it expected, and the code that builds it is seldom on the
traceback, while a real bug's one failing test ties every line it ran on the spectrum); its Ochiai score from the
spectrum (`RunTrace.scores`); being a frame of the failing traceback (the deepest frame first); a traced condition
value (`RunTrace.notes`); being in the module the
failing test's file is named after (`test_autowrap.py` -> `autowrap.py`). Without a spectrum (its layer off, or its
run failed) every line the failing test ran is a suspect, ordered by the same tie-breaks. An `if` whose block raises
has the raise's evidence too and comes just before it: the exception a failing test meets is seldom wrong in its
message, and often wrongly raised.
"""

import ast
import re
from dataclasses import dataclass, field

from pyharness.errors import ActionError
from pyharness.localise.filerank import TRACE_PATH, traceback_files
from pyharness.localise.linetrace import RunTrace
from pyharness.workspace.tree import Workspace

LINE_NUMBER = re.compile(r"(\d+)$")
"""The line number that ends a frame `filerank.TRACE_PATH` matched (`File "x.py", line 7` or `x.py:7`)."""
BODIES = ("body", "orelse", "finalbody", "handlers", "cases")
"""The fields of a compound statement that hold its block (what is left is its header)."""
CLOSING = re.compile(r"[)\]}][)\]}\s,]*:?\s*(#.*)?")
"""A header's own last line when it holds only closing brackets and the colon (`):` of a black-style `if (`)."""


@dataclass
class LineSuspect:
    """One statement that may hold the bug: the lines it covers in a repo file, and why it ranks where it does."""

    path: str
    start: int
    """First line of the statement (1-based)."""
    end: int
    """Last line (inclusive): a multi-line call's closing line, a compound statement's header end, never its block."""
    score: float
    """The best Ochiai score of its lines (0.0 without a spectrum)."""
    reasons: list[str] = field(default_factory=list)
    """Short words for the evidence: `ochiai 0.71`, `ran in failing test`, `on traceback`, `condition traced`."""

    def holds(self, path: str, line: int) -> bool:
        """True when line `line` of `path` is one of this suspect's lines."""
        return path == self.path and self.start <= line <= self.end


@dataclass
class _Evidence:
    """What the traces say about one statement, the best of its lines."""

    score: float = 0.0
    depth: int | None = None
    """Its innermost frame's place on the failing traceback (0: the deepest frame), None when not on it."""
    noted: bool = False
    ran: bool = False
    namesake: bool = False
    """In a module the failing test's file is named after."""
    said: bool = False
    """Holds a string literal whose words the failing test's error quotes (the message it got or expected)."""

    def key(self) -> tuple:
        return not self.said, -self.score, self.depth is None, self.depth or 0, not self.noted, not self.namesake

    def merge(self, other: "_Evidence") -> None:
        """Take the stronger of each piece of evidence (a guard takes its raise's)."""
        self.score = max(self.score, other.score)
        if other.depth is not None:
            self.depth = other.depth if self.depth is None else min(self.depth, other.depth)
        self.noted, self.ran = self.noted or other.noted, self.ran or other.ran
        self.said = self.said or other.said

    def reasons(self) -> list[str]:
        said = [f"ochiai {self.score:.2f}"] if self.score else ["ran in failing test"] if self.ran else []
        return (said + ["on traceback"] * (self.depth is not None) + ["message quoted"] * self.said
                + ["condition traced"] * self.noted)


def suspect_lines(ws: Workspace, trace: RunTrace, traceback: str) -> list[LineSuspect]:
    """Statements of non-test source files that the failing test ran, most suspicious first: by a string the error
    quotes, then by Ochiai score,
    then by being on the failing traceback (deepest frame first), then by a traced condition value, then by
    file and line; a statement of several lines has the best evidence of any of them. Condition notes come from
    the failing test alone (the tracer records no passing test's values), so "a condition was traced" stands in
    for "its values differ between failing and passing tests". Blank and comment lines, `def`/`class` headers
    (decorators included) and docstrings are never suspects."""
    depth: dict[tuple[str, int], int] = {}
    for n, frame in enumerate(traceback_lines(traceback, ws.files())):
        depth.setdefault(frame, n)
    tested = {_module_tested(path) for path in traceback_files(traceback, ws.files()) if ws.is_test_path(path)}
    quoted = quoted_words(traceback)
    ran = {(path, line) for path, lines in trace.lines.items() for line in lines}
    scored = {(path, line): score for path, lines in trace.scores.items() for line, score in lines.items()}
    found: dict[tuple[str, int, int], _Evidence] = {}
    files: dict[str, tuple[dict[int, tuple[int, int]], dict[tuple[int, int], tuple[int, int]]]] = {}
    """path -> (its statement spans by line, its raise -> guard spans): each file read and parsed once."""
    for path, line in sorted(ran | set(scored) | set(depth)):
        if not path.endswith(".py") or ws.is_test_path(path):
            continue
        if path not in files:
            files[path] = statement_spans(ws, path)
        span = files[path][0].get(line)
        if span is None:
            continue
        seen = found.setdefault((path, *span), _Evidence(namesake=_stem(path) in tested))
        seen.score = max(seen.score, scored.get((path, line), 0.0))
        if (path, line) in depth:
            here = depth[(path, line)]
            seen.depth = here if seen.depth is None else min(seen.depth, here)
        seen.noted = seen.noted or line in trace.notes.get(path, {})
        seen.ran = seen.ran or (path, line) in ran
        seen.said = seen.said or bool(quoted) and (path, line) in ran and _quotes(ws, path, line, quoted)
    for path, (_, guards) in files.items():
        for raised, guard in guards.items():
            if (path, *raised) in found:
                found.setdefault((path, *guard), _Evidence(namesake=_stem(path) in tested)).merge(
                    found[(path, *raised)])
    ordered = sorted(found.items(), key=lambda item: (item[1].key(), item[0]))
    return [LineSuspect(path, start, end, seen.score, seen.reasons()) for (path, start, end), seen in ordered]


QUOTED = re.compile(r"'([^'\n]{3,})'" + r'|"([^"\n]{3,})"')
WORD = re.compile(r"[A-Za-z]{3,}")
COMMON = frozenset({"the", "and", "for", "not", "with", "was", "are", "but", "this", "that", "from", "has", "have",
                    "got", "none", "true", "false", "self"})
"""Words too common to tie a message to its code."""
MIN_SHARED = 2
"""Words a string literal must share with the error's quoted text to count as the message it builds."""


def quoted_words(traceback: str) -> set[str]:
    """The words (3+ letters, lower case) inside quotes on the failing test's `E` lines: the text it got and the
    text it expected, where an assertion compares strings or an exception carries a message."""
    said = [line.strip()[1:] for line in traceback.splitlines() if line.strip().startswith("E ")]
    return {word.lower() for line in said for match in QUOTED.finditer(line)
            for word in WORD.findall(match.group(1) or match.group(2))} - COMMON


def _quotes(ws: Workspace, path: str, line: int, words: set[str]) -> bool:
    """True when line `line` of `path` holds a string literal that shares MIN_SHARED of `words` (or all of its own
    words, for a literal of one word)."""
    try:
        text = ws.read_text(path).splitlines()[line - 1]
    except (OSError, ActionError, IndexError):
        return False
    for match in QUOTED.finditer(text):
        own = {word.lower() for word in WORD.findall(match.group(1) or match.group(2))} - COMMON
        if own and len(own & words) >= min(MIN_SHARED, len(own)):
            return True
    return False


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".py")


def _module_tested(test_path: str) -> str:
    """The module a test file is named after: `tests/test_autowrap.py` and `autowrap_test.py` -> `autowrap`."""
    return _stem(test_path).removeprefix("test_").removesuffix("_test")


def raise_guards(tree: ast.AST, lines: list[str]) -> dict[tuple[int, int], tuple[int, int]]:
    """(start, end) of each `raise` directly in an `if`/`elif` block -> (start, end) of that `if`'s header."""
    guards = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            header = (node.lineno, _header_end(node, lines) or node.lineno)
            for stmt in node.body:
                if isinstance(stmt, ast.Raise):
                    guards[(stmt.lineno, stmt.end_lineno)] = header
    return guards


def traceback_lines(traceback: str, files: list[str]) -> list[tuple[str, int]]:
    """(repo file, line) of each frame of a traceback that names one of `files`, innermost first (pytest prints the
    test's frame first, the deepest frame last); frames of other files (the standard library, site-packages) are
    left out."""
    frames = []
    for match in TRACE_PATH.finditer(traceback):
        found = traceback_files(match.group(0), files)  # filerank's path matching (absolute, ./x), one frame at a time
        if found:
            frames.append((found[0], int(LINE_NUMBER.search(match.group(0)).group(1))))
    return frames[::-1]


def statement_spans(ws: Workspace, path: str):
    """(line -> (start, end) of the statement the line belongs to, for each line of `path` that is code; its
    `raise_guards`), from one parse; ({}, {}) when the file cannot be read or parsed."""
    try:
        source = ws.read_text(path)
        tree = ast.parse(source)
    except (OSError, ActionError, SyntaxError, ValueError):
        return {}, {}
    return spans_of(source, tree), raise_guards(tree, source.splitlines())


def spans_of(source: str, tree: ast.AST | None = None) -> dict[int, tuple[int, int]]:
    """line -> (start, end) of the one statement the line belongs to: a simple statement's whole extent (a call
    over three lines is one span), a compound statement's header only (a multi-line `if` condition, not its block),
    nothing for `def`/`class` headers, docstrings and other bare strings, `try:` and bare `except:` lines, blank
    and comment lines. A line shared by a header and the statement after its colon (`if x: return y`) goes to
    the innermost statement."""
    lines = source.splitlines()
    spans: dict[int, tuple[int, int] | None] = {}
    for node in ast.walk(tree or ast.parse(source)):  # outer statements first, so an inner one takes a shared line
        if not isinstance(node, ast.stmt | ast.excepthandler | ast.match_case):
            continue
        start = node.pattern.lineno if isinstance(node, ast.match_case) else node.lineno
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            first = min([start, *(d.lineno for d in node.decorator_list)])
            spans.update(dict.fromkeys(range(first, max(start, node.body[0].lineno - 1) + 1)))
        elif _is_bare_string(node):
            spans.update(dict.fromkeys(range(start, node.end_lineno + 1)))
        elif not any(getattr(node, name, None) for name in BODIES):
            spans.update(dict.fromkeys(range(start, node.end_lineno + 1), (start, node.end_lineno)))
        else:
            end = _header_end(node, lines)
            spans.update(dict.fromkeys(range(start, (end or start) + 1), end and (start, end)))
    return {line: span for line, span in spans.items() if span is not None}


def _header_end(node: ast.AST, lines: list[str]) -> int | None:
    """The last line of a compound statement's header (its condition, iterable, context managers, subject,
    pattern, exception type, and a line of closing brackets after them); None when it has none to repair
    (`try:`, a bare `except:`)."""
    parts = [child for name, child in ast.iter_fields(node) if name not in BODIES]
    ends = [inner.end_lineno for part in parts for item in (part if isinstance(part, list) else [part])
            if isinstance(item, ast.AST) for inner in ast.walk(item) if getattr(inner, "end_lineno", None)]
    if not ends:
        return None
    end = max(ends)
    while end < len(lines) and CLOSING.fullmatch(lines[end].strip()):  # lines[end] is line end + 1
        end += 1
    return end


def _is_bare_string(node: ast.AST) -> bool:
    """A statement that is only a string: a docstring, or a note under an attribute; never code to repair."""
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
