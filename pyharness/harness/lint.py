"""lint: refuse a write or edit that breaks a Python file, or that leaves a lazy placeholder for the real code.

Only what the change makes worse is refused: a file that did not compile before may be edited freely,
and a pyflakes error that was already in the old text (compared without line numbers) is not the
model's doing. Warnings (unused imports, unused variables) never refuse a change.
"""

import ast
import re
import warnings

from pyflakes import checker

FATAL_PYFLAKES = frozenset({
    "UndefinedName", "UndefinedLocal", "UndefinedExport", "DuplicateArgument",
    "ReturnOutsideFunction", "YieldOutsideFunction", "ContinueOutsideLoop", "BreakOutsideLoop",
    "DefaultExceptNotLast", "TwoStarredExpressions", "TooManyExpressionsInStarredAssignment",
    "ImportStarNotPermitted", "LateFutureImport", "FutureFeatureNotDefined", "InvalidPrintSyntax",
})
"""pyflakes message classes that mean the code fails when it runs (flake8's F8xx/F7xx errors), not style."""

CONTEXT = 3
MAX_LISTED = 5
LINE_REF = re.compile(r"\bline \d+")

_COMMENT = re.compile(r"^\s*(?:#|//|/\*|<!--)\s*(.*?)\s*(?:\*/|-->)?\s*$")
_LAZY_COMMENT = re.compile(
    r"^(?:\.\.\.|…)"  # a comment that starts with an ellipsis: '# ...', '# ... rest of code'
    r"|^\(?\s*(?:unchanged|same as (?:before|above|original))\b"
    r"|^(?:the )?(?:rest|remainder) of (?:the |this )?(?:code|file|class|function|method|module|implementation"
    r"|body|logic|script|program|tests?|methods|functions)\b"
    r"|^(?:existing|previous|original|other|remaining) (?:code|methods|functions|implementation|imports|content)"
    r"(?:\s+(?:here|goes here|remains?|unchanged|omitted|as before|\.\.\.|…)|\s*(?:\.\.\.|…|$))"
    r"|^(?:everything|all|the rest|(?:the )?(?:other )?(?:code|file|implementation))(?: else)?"
    r" (?:remains?|stays?|is|are|left) (?:the same|unchanged|as (?:is|before))"
    r"|\b(?:code|implementation) omitted\b|\bomitted for brevity\b",
    re.IGNORECASE,
)
_LAZY_TEXT = re.compile(
    r"^[\[(<]?\s*(?:\.\.\.|…)\s*(?:rest|existing|previous|remaining|unchanged|same|omitted|other code|more code"
    r"|your code)\b.*$",
    re.IGNORECASE,
)


def check_change(path: str, old: str | None, new: str) -> str | None:
    """An error message if writing `new` over `old` (None: a new file) breaks a .py file, else None."""
    if not path.endswith(".py"):
        return None
    old_error = None if old is None else _compile_error(old, path)
    if old_error is not None:
        return None  # an already broken file may be edited; we cannot tell what the change broke
    new_error = _compile_error(new, path)
    if new_error is not None:
        return _syntax_message(path, old is None, new, new_error)
    found = _fatal_messages(new, path)
    if not found:
        return None
    known = {_without_lines(text) for _, text in _fatal_messages(old, path)} if old is not None else set()
    added = [(line, text) for line, text in found if _without_lines(text) not in known]
    if not added:
        return None
    listed = "; ".join(f"line {line}: {text}" for line, text in added[:MAX_LISTED])
    more = f" (and {len(added) - MAX_LISTED} more)" if len(added) > MAX_LISTED else ""
    return (
        f"Refused: this change to {path} adds an error: {listed}{more}\n"
        f"{_numbered(new, added[0][0])}\n"
        "Nothing was written. Fix it (define or import the name, or move the statement) and send the whole edit again."
    )


def lazy_placeholder(content: str) -> str | None:
    """The first line of `content` that stands in for code instead of being code (`# ... rest of code`), or None."""
    for line in content.splitlines():
        comment = _COMMENT.match(line)
        if comment and _LAZY_COMMENT.search(comment.group(1)):
            return line.strip()
        if _LAZY_TEXT.match(line.strip()):
            return line.strip()
    return None


def empty_functions(source: str) -> list[str]:
    """Functions whose body is only a docstring (plus `pass` or `...`): the prompt's signature copied back with
    no code, a placeholder like `# ... rest of code`. A body-less function without a docstring is a real no-op."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or ast.get_docstring(node) is None:
            continue
        rest = node.body[1:]
        if all(isinstance(s, ast.Pass) or isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant)
               and s.value.value is Ellipsis for s in rest):
            found.append(node.name)
    return found


def _compile_error(source: str, path: str) -> Exception | None:
    """Why `source` does not compile, or None when it does."""
    try:
        _quiet_compile(source, path, 0)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return error
    return None


def _quiet_compile(source: str, path: str, flags: int) -> object:
    """compile() without the SyntaxWarnings (invalid escapes) it would print for code that still compiles."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compile(source, path, "exec", flags, dont_inherit=True)


def _syntax_message(path: str, is_new: bool, source: str, error: Exception) -> str:
    """One line naming the syntax error, the numbered lines around it, and what to do."""
    what = "would not compile" if is_new else "would no longer compile"
    if isinstance(error, SyntaxError) and error.lineno:
        head = f"Refused: {path} {what}: {type(error).__name__} at line {error.lineno}: {error.msg}"
        body = "\n" + _numbered(source, error.lineno)
    else:
        head, body = f"Refused: {path} {what}: {type(error).__name__}: {error}", ""
    return f"{head}{body}\nNothing was written. Fix the syntax and send the whole edit again."


def _fatal_messages(source: str, path: str) -> list[tuple[int, str]]:
    """(line, text) of each fatal pyflakes message for a source that compiles, in file order."""
    tree = _quiet_compile(source, path, ast.PyCF_ONLY_AST)
    found = checker.Checker(tree, filename=path).messages
    fatal = [m for m in found if type(m).__name__ in FATAL_PYFLAKES]
    fatal.sort(key=lambda m: (m.lineno, m.col))
    return [(m.lineno, m.message % m.message_args) for m in fatal]


def _without_lines(text: str) -> str:
    """A message text with its line references dropped, so moved code still matches."""
    return LINE_REF.sub("line", text)


def _numbered(source: str, lineno: int) -> str:
    """Lines lineno±CONTEXT of source, numbered, with '>' on lineno."""
    lines = source.splitlines() or [""]
    lineno = min(max(lineno, 1), len(lines))
    first, last = max(1, lineno - CONTEXT), min(len(lines), lineno + CONTEXT)
    width = len(str(last))
    return "\n".join(
        f"{'>' if n == lineno else ' '} {n:>{width}} | {lines[n - 1]}" for n in range(first, last + 1)
    )
