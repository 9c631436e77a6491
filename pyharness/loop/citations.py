"""ask mode's acceptance rule: the answer cites path:line of a file the model read, the line exists, and the
cited line (or the one above or below) holds a fact the answer states.

A fact is a number, a code name (`tax_rate`, `TAX_RATES`, `OrderLine`, `total()`, anything in backticks) or
quoted text. When the answer states a number, the number must be there: it is what ask questions most often
want, and what a small model most often cites on the wrong line. A refused answer gets the real lines around
its citation, numbered, and, when another line of a file it read holds the fact, the corrected answer to send.
"""

import json
import re
from dataclasses import dataclass, field

from pyharness.errors import ActionError
from pyharness.workspace.tree import Workspace

CITATION = re.compile(r"(?<![\w/.-])((?:\./)?[\w/.-]*[\w-]\.[A-Za-z]\w*)(?::(\d+))?")
LINE_WORD = re.compile(r"\blines?\s+(\d+)\b", re.IGNORECASE)
NUMBER = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)(\s?%)?(?!\w)")
QUOTED = re.compile(r"`([^`\n]+)`|\"([^\"\n]{2,})\"|(?<!\w)'([^'\n]{2,}?)'(?!\w)")
WORD = re.compile(r"[A-Za-z_]\w*")
DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
FILE_TYPES = {"py", "pyi", "md", "rst", "txt", "toml", "cfg", "ini", "json", "yaml", "yml", "js", "ts", "sh", "c",
              "h", "html", "css", "csv", "lock"}
AROUND = 3
"""Lines shown on each side of a refused citation."""


@dataclass
class Citation:
    """One `path:line` (or bare path) in an answer, as written."""

    path: str
    line: int | None
    written: str


@dataclass
class Facts:
    """What an answer states, apart from its citations."""

    numbers: list[tuple[float, bool, str]] = field(default_factory=list)
    """(value, written as a percentage, as written)."""
    names: set[str] = field(default_factory=set)
    quotes: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.numbers or self.names or self.quotes)

    def shown(self) -> str:
        """The facts, for a message to the model."""
        items = [text for _, _, text in self.numbers] or sorted(self.names) + [repr(q) for q in self.quotes]
        return ", ".join(dict.fromkeys(items))

    def found_in(self, lines: list[str]) -> list[str]:
        """The facts these lines hold; numbers first: an answer that states a number is checked on its numbers."""
        text = "\n".join(lines)
        if self.numbers:
            values = [float(n) for n in NUMBER_ON_LINE.findall(text)]
            return [written for value, percent, written in self.numbers
                    if any(_same(value, percent, v) for v in values)]
        words = set(WORD.findall(text))
        return sorted(n for n in self.names if n in words) + [q for q in self.quotes if q in text]


NUMBER_ON_LINE = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?![\w])")


def citations(text: str) -> list[Citation]:
    """The path[:line] citations of an answer; a bare path plus `line N` elsewhere counts as path:N."""
    found = [Citation(m.group(1).removeprefix("./"), int(m.group(2)) if m.group(2) else None, m.group(0))
             for m in CITATION.finditer(text)]
    paths = {c.path for c in found}
    words = LINE_WORD.findall(text)
    if len(paths) == 1 and not any(c.line for c in found) and len(words) == 1:
        only = found[0]
        found = [Citation(only.path, int(words[0]), only.written)]
    return found


def stated(text: str, read: set[str] = frozenset()) -> Facts:
    """The numbers, code names and quoted text of an answer, its citations and `line N` left out (a dotted name
    such as `line.total` is a name unless it has a line number, names a file read or looks like a file)."""
    text = CITATION.sub(lambda m: " " if _is_file(m, read) else m.group(0), text)
    text = LINE_WORD.sub(" ", text)
    facts = Facts()
    for match in QUOTED.finditer(text):
        quote = next(g for g in match.groups() if g)
        facts.quotes.append(quote.strip())
        if match.group(1):  # backticks mark code: its names count as names
            facts.names.update(WORD.findall(quote))
    unquoted = QUOTED.sub(" ", text)
    for match in NUMBER.finditer(unquoted):
        facts.numbers.append((float(match.group(1)), bool(match.group(2)), match.group(0).strip()))
    for match in DOTTED.finditer(unquoted):
        facts.names.update(part for part in match.group(0).split(".") if len(part) > 1)
    for match in WORD.finditer(unquoted):
        word = match.group(0)
        called = unquoted[match.end():match.end() + 1] == "("
        if called or _code_like(word):
            facts.names.add(word)
    return facts


def check_answer(text: str, ws: Workspace) -> str:
    """The verdict on an ask answer, or an ActionError that says what is wrong and shows the real lines."""
    cited = citations(text)
    read = [c for c in cited if c.path in ws.read_files]
    facts = stated(text, ws.read_files)
    if not read:
        where = locate(facts, ws)
        if where:
            fixed = json.dumps({"text": f"{text.strip().rstrip('.')} ({where})."})
            raise ActionError(f"not accepted: the answer must cite the file it comes from as path:line. "
                              f"If {where} is the source, reply:\nAction: answer {fixed}")
        listed = ", ".join(sorted(ws.read_files)) or "nothing yet"
        raise ActionError("not accepted: the answer must cite a file you read, as path:line "
                          f"(files read so far: {listed}). Read the file, then answer again.")
    lined = [c for c in read if c.line is not None]
    if not lined:
        where = locate(facts, ws, only={c.path for c in read})
        hint = f" If {where} is the source, reply:\nAction: answer {_fixed(text, read[0], where)}" if where else ""
        raise ActionError(f"not accepted: cite the line too, as {read[0].path}:LINE (the line that holds the "
                          f"answer).{hint}")
    files = {c.path: ws.read_text(c.path).splitlines() for c in lined}
    for c in lined:
        lines = files[c.path]
        if not 1 <= c.line <= len(lines):
            raise ActionError(f"not accepted: {c.path}:{c.line} does not exist ({c.path} has {len(lines)} lines). "
                              f"Its last lines:\n{numbered(lines, len(lines) - 2 * AROUND, len(lines))}\n"
                              "Cite the line that holds the answer, as path:line.")
    first = lined[0]
    if not facts:
        raise ActionError(f"not accepted: the answer must say what the cited line shows (a value, a name or "
                          f"quoted text), not only {first.path}:{first.line}. "
                          f"{_around(first, files[first.path])}")
    found = facts.found_in([line for c in lined for line in files[c.path][max(0, c.line - 2):c.line + 1]])
    if found:
        return f"answer cites {first.path}:{first.line}, which holds {found[0]}"
    where = locate(facts, ws, only={c.path for c in read}) or locate(facts, ws)
    hint = f"\nIf {where} is the source, reply:\nAction: answer {_fixed(text, first, where)}" if where else ""
    raise ActionError(f"not accepted: {first.path}:{first.line} does not hold {facts.shown()}. "
                      f"{_around(first, files[first.path])}{hint}")


def locate(facts: Facts, ws: Workspace, only: set[str] | None = None) -> str | None:
    """path:line of the line, in a (non-test) file the model read, that holds the most of the answer's facts."""
    best, where = 0, None
    for rel in sorted(only if only is not None else ws.read_files):
        if ws.is_test_path(rel) or rel not in ws.read_files:
            continue
        try:
            lines = ws.read_text(rel).splitlines()
        except ActionError:
            continue
        for n, line in enumerate(lines, 1):
            score = len(facts.found_in([line]))
            if score > best:
                best, where = score, f"{rel}:{n}"
    return where


def numbered(lines: list[str], start: int, end: int) -> str:
    """Lines start..end (1-based, clipped to the file), each with its number."""
    first, last = max(1, start), min(len(lines), end)
    return "\n".join(f"{n:>4}| {lines[n - 1]}" for n in range(first, last + 1))


def _around(c: Citation, lines: list[str]) -> str:
    first, last = max(1, c.line - AROUND), min(len(lines), c.line + AROUND)
    return (f"Lines {first}-{last} of {c.path}:\n{numbered(lines, first, last)}\n"
            "Cite the line that holds the answer, as path:line.")


def _fixed(text: str, cited: Citation, where: str) -> str:
    return json.dumps({"text": text.strip().replace(cited.written, where, 1)})


def _is_file(match: re.Match, read: set[str]) -> bool:
    path = match.group(1).removeprefix("./")
    return bool(match.group(2)) or path in read or "/" in path or path.rsplit(".", 1)[-1] in FILE_TYPES


def _same(stated_value: float, percent: bool, on_line: float) -> bool:
    """A stated number matches the line's number, also as a percentage (5% and 0.05)."""
    close = abs(stated_value - on_line) < 1e-9
    return close or (percent and abs(stated_value / 100 - on_line) < 1e-9)


def _code_like(word: str) -> bool:
    """A name as code writes it (snake_case, CamelCase, CONSTANT, x2), not an English word."""
    return "_" in word or any(ch.isdigit() for ch in word) or any(ch.isupper() for ch in word[1:]) or (
        len(word) == 1 and word.isupper())
