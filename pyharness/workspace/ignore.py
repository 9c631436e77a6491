"""Which files of a tree ph never lists, searches or maps: build output, environments, caches, and what the
tree's own .gitignore files say (gitignore semantics through `pathspec`).

In a git work tree git's own rules already apply (`gitops.listed_files` leaves ignored files out); these
defaults apply on top, because a tree may commit its build output (an unpacked sdist holds `*.egg-info/`).
A folder holding a `pyvenv.cfg` is a virtualenv whatever its name.
"""

import os
from functools import lru_cache
from pathlib import Path

DEFAULT_PATTERNS = (
    ".git/", ".hg/", ".svn/", ".ph/",
    "build/", "dist/", ".eggs/", "*.egg-info/", "pip-wheel-metadata/", "__pypackages__/",
    ".tox/", ".nox/", ".venv/", "venv/", "site-packages/", "node_modules/",
    "__pycache__/", "*.py[cod]", "*.so", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/", ".hypothesis/",
    ".ipynb_checkpoints/", "htmlcov/", ".coverage", ".DS_Store",
)
VENV_MARKER = "pyvenv.cfg"


@lru_cache(maxsize=1)
def default_spec():
    """The built-in rules as one compiled gitignore spec (pathspec loads only when a tree is listed)."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(DEFAULT_PATTERNS)


def visible(names: list[str]) -> list[str]:
    """The repo-relative posix names the built-in rules and virtualenv folders leave in (order kept)."""
    venvs = {name[: -len(VENV_MARKER)] for name in names if name == VENV_MARKER or name.endswith("/" + VENV_MARKER)}
    spec = default_spec()
    return [name for name in names
            if not spec.match_file(name) and not any(name.startswith(v) for v in venvs)]


def walk(root: Path) -> list[str]:
    """Every file under root that neither the built-in rules nor a .gitignore on its way excludes (for a tree that
    is not a git work tree). Ignored folders are never entered, so a 100,000-file venv costs nothing."""
    import pathspec

    spec = default_spec()
    found: list[str] = []
    scopes: list[tuple[str, pathspec.PathSpec]] = []  # (folder prefix, its .gitignore rules), outermost first
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        scopes = [(p, s) for p, s in scopes if prefix.startswith(p)]
        if ".gitignore" in filenames:
            try:
                text = (Path(dirpath) / ".gitignore").read_text(encoding="utf-8", errors="replace")
                scopes.append((prefix, pathspec.GitIgnoreSpec.from_lines(text.splitlines())))
            except OSError:
                pass
        if VENV_MARKER in filenames and prefix:
            dirnames[:] = []
            continue
        dirnames[:] = sorted(d for d in dirnames if not _ignored(prefix + d + "/", spec, scopes))
        found += [prefix + name for name in filenames if not _ignored(prefix + name, spec, scopes)]
    return sorted(found)


def _ignored(rel: str, spec, scopes: list) -> bool:
    """True when the built-in rules or a .gitignore scoped to a folder above match `rel` (folders end in /)."""
    return spec.match_file(rel) or any(rules.match_file(rel[len(prefix):]) for prefix, rules in scopes)
