"""lint repair: a missing import the model plainly meant is added instead of refusing the change.

In a new test, a name pyflakes calls undefined is resolved to the one module of the repo that defines it
at top level, or, if none does yet, to the one module path the task text names (`orders/shipping.py`).
In any Python file, a standard-library module or a name with one obvious home (`sys`, `re`, `Counter`,
`defaultdict`, `datetime`) gets its import. Anything ambiguous is left to the lint refusal.
"""

import ast
import re
import warnings

from pyflakes import checker

from pyharness.workspace import Workspace

PATH_IN_TASK = re.compile(r"\b([\w/]+)\.py\b")


def undefined_names(source: str) -> list[str] | None:
    """Names pyflakes reports undefined, in order; None when the source does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    found = checker.Checker(tree).messages
    return list(dict.fromkeys(m.message_args[0] for m in found if type(m).__name__ == "UndefinedName"))


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


STDLIB = {
    **{m: f"import {m}" for m in ("sys", "os", "re", "math", "json", "string", "itertools", "functools", "heapq",
                                   "bisect", "random", "statistics", "collections", "decimal", "fractions",
                                   "textwrap", "operator", "time", "calendar", "csv", "io")},
    **{n: f"from collections import {n}" for n in ("Counter", "defaultdict", "deque", "OrderedDict", "namedtuple")},
    **{n: f"from functools import {n}" for n in ("reduce", "lru_cache", "cache", "cmp_to_key")},
    **{n: f"from itertools import {n}" for n in ("groupby", "permutations", "combinations", "product",
                                                  "accumulate", "chain")},
    **{n: f"from datetime import {n}" for n in ("date", "timedelta")},
    **{n: f"from typing import {n}" for n in ("List", "Dict", "Tuple", "Optional", "Set", "Iterable", "Any")},
    "Decimal": "from decimal import Decimal",
    "Fraction": "from fractions import Fraction",
}


def stdlib_imports(source: str) -> tuple[str, list[str]] | None:
    """`source` with imports added for undefined names that are standard-library modules or well-known names
    of one (`datetime` as the module when used as `datetime.datetime`/`.date`/`.timedelta`, else the class);
    None when some undefined name is not one of those."""
    names = undefined_names(source)
    if not names:
        return None
    lines = []
    for name in names:
        if name == "datetime":
            module = re.search(r"\bdatetime\.(?:datetime|date|timedelta|time|timezone)\b", source)
            lines.append("import datetime" if module else "from datetime import datetime")
        elif name in STDLIB:
            lines.append(STDLIB[name])
        else:
            return None
    return "\n".join(lines) + "\n" + source, lines
