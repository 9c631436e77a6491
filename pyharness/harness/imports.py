"""Missing imports: the import a piece of code plainly meant is added instead of refusing or failing it.

lint repair: in a new test, a name pyflakes calls undefined is resolved to the one module of the repo that defines
it at top level, or, if none does yet, to the one module path the task text names (`orders/shipping.py`). In any
Python file, standard-library names get their import (`stdlib_imports`); anything ambiguous is left to the lint
refusal. Trials repair (layer `stdimports`): each candidate gets the standard-library imports it forgot before it is
checked (`with_stdlib_imports`), whatever else it lacks.
"""

import ast
import importlib
import re
import sys
import warnings
from collections.abc import Collection

from pyflakes import checker, messages

from pyharness.workspace.tree import Workspace

PATH_IN_TASK = re.compile(r"\b([\w/]+)\.py\b")


def undefined_names(source: str) -> list[str] | None:
    """Names pyflakes reports undefined, in order; None when the source does not parse."""
    tree = _parse(source)
    return None if tree is None else list(_uses(tree))


def _parse(source: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return None


def _uses(tree: ast.Module) -> dict[str, list[str | None]]:
    """Each undefined name (pyflakes' `UndefinedName`), in the order reported, with how each undefined use of it
    reads: the attribute taken from it (`datetime.now` -> 'now'), or None for any other use."""
    taken = {(node.value.lineno, node.value.col_offset): node.attr for node in ast.walk(tree)
             if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)}
    found: dict[str, list[str | None]] = {}
    for message in checker.Checker(tree).messages:
        if isinstance(message, messages.UndefinedName):
            found.setdefault(message.message_args[0], []).append(taken.get((message.lineno, message.col)))
    return found


def _top_level(source: str) -> list[str]:
    """The functions and classes a module defines at its top level ([] when it does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [node.name for node in tree.body if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def resolve(names: list[str], ws: Workspace, task: str) -> dict[str, str] | None:
    """name -> module for every name, or None if any name has no single home."""
    defined: dict[str, set[str]] = {}
    for rel in ws.files():
        if not rel.endswith(".py") or ws.is_test_path(rel):
            continue
        module = rel[:-3].replace("/", ".").removesuffix(".__init__")
        for name in ws.cache.derive(ws.root / rel, "toplevel", _top_level) or ():  # parsed once per file version
            defined.setdefault(name, set()).add(module)
    named = {m.replace("/", ".") for m in PATH_IN_TASK.findall(task) if not m.startswith("test")}
    out = {}
    for name in names:
        homes = defined.get(name) or (named if len(named) == 1 else set())
        if len(homes) != 1:
            return None
        out[name] = next(iter(homes))
    return out


def add_imports(source: str, ws: Workspace, task: str) -> tuple[str, list[str]] | None:
    """`source` with `from M import name` lines added for its undefined names; None if that cannot fix it."""
    names = undefined_names(source)
    if not names:
        return None
    homes = resolve(names, ws, task)
    if not homes:
        return None
    lines = [f"from {module} import {name}" for name, module in homes.items()]
    return "\n".join(lines) + "\n\n" + source.lstrip("\n"), lines


def _members(module: str, names: str) -> dict[str, str]:
    return {name: module for name in names.split()}


MEMBERS = {
    **_members("sys", "stdin stdout stderr argv setrecursionlimit maxsize"),
    **_members("collections", "defaultdict Counter deque namedtuple OrderedDict ChainMap"),
    **_members("functools", "reduce lru_cache cache partial cmp_to_key wraps total_ordering cached_property"),
    **_members("itertools", "permutations combinations combinations_with_replacement product chain groupby "
                            "accumulate islice zip_longest pairwise starmap takewhile dropwhile cycle"),
    **_members("math", "sqrt isqrt floor ceil pi inf gcd lcm factorial comb prod log log2 log10 exp hypot isclose "
                       "sin cos tan atan2 radians degrees"),
    **_members("typing", "List Dict Tuple Set FrozenSet Optional Union Any Callable Iterable Iterator Generator "
                         "Sequence Mapping NamedTuple Literal"),
    **_members("datetime", "datetime date timedelta timezone"),
    **_members("dataclasses", "dataclass field asdict"),
    **_members("heapq", "heappush heappop heapify heappushpop heapreplace nlargest nsmallest"),
    **_members("bisect", "bisect bisect_left bisect_right insort insort_left insort_right"),
    **_members("random", "random randint randrange choice shuffle uniform"),
    **_members("string", "ascii_lowercase ascii_uppercase ascii_letters punctuation"),
    **_members("copy", "copy deepcopy"),
    **_members("operator", "itemgetter attrgetter"),
    **_members("time", "sleep perf_counter"),
    **_members("pprint", "pprint"),
    "Path": "pathlib",
    "Fraction": "fractions",
    "Decimal": "decimal",
}
"""Well-known public names of one commonly used standard-library module: an undefined `Counter` is `from collections
import Counter`. Declared here, never found by importing modules."""
ODD_MODULES = frozenset(
    "this antigravity idlelib tkinter turtle turtledemo lib2to3 ensurepip venv pydoc_data encodings genericpath "
    "ntpath nturl2path posixpath opcode sre_compile sre_constants sre_parse nt msvcrt winreg winsound msilib "
    "distutils imp asynchat asyncore smtpd aifc audioop cgi cgitb chunk crypt imghdr mailcap nis nntplib "
    "ossaudiodev pipes sndhdr spwd sunau telnetlib uu xdrlib".split())
"""Standard-library modules never imported by the repair: importing them has an effect (`this` prints, `antigravity`
opens a browser), needs a GUI, is internal, is another platform's, or is gone from newer Pythons."""
MODULES = frozenset(name for name in sys.stdlib_module_names if not name.startswith("_")) - ODD_MODULES


def stdlib_import(name: str, uses: list[str | None]) -> str | None:
    """The import line for an undefined `name` used as `uses` say, or None when it is not plainly one.

    A standard-library module is imported when every use takes an attribute of it (`sys.stdin`; a bare `code` or
    `string` is a forgotten variable, not a module). A name of `MEMBERS` is imported from its module whatever the use.
    A name that is both (`datetime`, `random`, `copy`, `bisect`, `pprint`) is decided by usage: every use takes an
    attribute the module has (`datetime.date`, `datetime.timedelta`, `datetime.datetime`) -> `import datetime`; no
    use does (`datetime.now`, `datetime.strptime`, `datetime(2024, 1, 1)`) -> `from datetime import datetime`; some
    of each cannot both work, so nothing is added."""
    member = f"from {MEMBERS[name]} import {name}" if name in MEMBERS else None
    if name not in MODULES:
        return member
    if member is None:
        return f"import {name}" if all(uses) else None
    found = importlib.import_module(name)  # one of the few modules of MEMBERS named like a member: no side effects
    as_module = [attr is not None and hasattr(found, attr) for attr in uses]
    return f"import {name}" if all(as_module) else None if any(as_module) else member


def _plan(source: str, skip: Collection[str] = ()) -> tuple[ast.Module, dict[str, str | None]] | None:
    """The parsed source and, for each undefined name not in `skip`, its import line (None: not a standard one)."""
    tree = _parse(source)
    if tree is None:
        return None
    return tree, {name: stdlib_import(name, uses) for name, uses in _uses(tree).items() if name not in skip}


def with_stdlib_imports(source: str, skip: Collection[str] = ()) -> tuple[str, list[str]]:
    """`source` with an import added for each undefined name (not in `skip`) that is a standard-library module or a
    well-known name of one, and the lines added; unchanged with [] when there is none or it does not parse."""
    plan = _plan(source, skip)
    lines = sorted({line for line in plan[1].values() if line}) if plan else []
    new = insert_imports(source, plan[0], lines) if plan and lines else source
    return (new, lines) if new != source else (source, [])


def stdlib_imports(source: str) -> tuple[str, list[str]] | None:
    """lint: `source` with the imports of its undefined names, and the lines added; None when there are none or some
    undefined name is not a standard-library one (the lint refusal then says which)."""
    plan = _plan(source)
    if plan is None or not plan[1] or not all(plan[1].values()):
        return None
    new, lines = with_stdlib_imports(source)
    return (new, lines) if lines else None


CODING = re.compile(r"^[ \t\f]*#.*?coding[:=]")


def insert_imports(source: str, tree: ast.Module, lines: list[str]) -> str:
    """`lines` put after the module docstring and the `from __future__` imports (with neither, at the top, below a
    `#!` line and an encoding comment), before the first other statement; nothing else of `source` changes. The
    source as it was when the result would not parse."""
    end, body = 0, tree.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) and \
            isinstance(body[0].value.value, str):
        end, body = body[0].end_lineno or 0, body[1:]
    for node in body:
        if not (isinstance(node, ast.ImportFrom) and node.module == "__future__"):
            break
        end = node.end_lineno or end
    parts = re.split(r"(?<=\n)|(?<=\r)(?!\n)", source)  # the lines as Python counts them, each with its ending
    if not end:
        while end < min(2, len(parts) - 1) and (parts[end].startswith("#!") or CODING.match(parts[end])):
            end += 1
    newline = next((ending for ending in ("\r\n", "\r") if parts[0].endswith(ending)), "\n")
    if end and not parts[end - 1].endswith(("\n", "\r")):
        parts[end - 1] += newline
    new = "".join(parts[:end]) + "".join(line + newline for line in lines) + "".join(parts[end:])
    return new if _parse(new) is not None else source
