"""Pytest's configuration pinned to the repo: its rootdir, ini file and conftest files never come from a folder above.

Left to itself, pytest walks up from its arguments to the first `pytest.ini`/`tox.ini`/`setup.cfg`/`pyproject.toml`
it finds and loads every `conftest.py` from that rootdir down; a repo under `/tmp` (or in any folder a stranger can
write) would then run a conftest ph never saw and take options (`addopts = --junitxml=...`) from an ini file outside
the repo (docs/safety-cases.md case 71). `pinned_args` finds the repo's own config the way pytest would, but only
from the targets' folder up to the repo root, and names it, the rootdir and the conftest cut-off explicitly: the
repo's own settings apply as before; nothing above the repo is read.
"""

import configparser
import os
import tomllib
from pathlib import Path

CONFIG_FILES = ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
"""The files pytest reads its configuration from, in the order it tries them in one folder."""
UNSAFE_START = ("-", "@")
"""A target starting with one of these is a pytest option (`--junitxml=...`) or an argument file (`@file`)."""


def is_config(path: Path) -> bool:
    """True when `path` is a pytest configuration file by pytest's own rules (a section for pytest where needed)."""
    if not path.is_file() or path.is_symlink():
        return False
    if path.name in ("pytest.ini", ".pytest.ini"):
        return True
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
        if path.name == "pyproject.toml":
            tool = tomllib.loads(text).get("tool", {})
            return isinstance(tool.get("pytest"), dict) and bool(tool["pytest"])  # ini_options, or pytest 9's table
        parser = configparser.RawConfigParser(strict=False, interpolation=None)
        parser.read_string(text)
    except (OSError, ValueError, configparser.Error):
        return False
    return parser.has_section("pytest" if path.name == "tox.ini" else "tool:pytest")


def repo_config(root: Path, targets: list[str]) -> Path | None:
    """The config file pytest would pick for `targets`, looking only inside `root` (None: the repo has none)."""
    root = root.resolve()
    start = _common_folder(root, targets)
    for folder in [start, *start.parents]:
        for name in CONFIG_FILES:
            if is_config(folder / name):
                return folder / name
        if folder == root:
            break
    return None


def pinned_args(root: Path, targets: list[str]) -> list[str]:
    """`--rootdir`, `-c` and `--confcutdir` for a pytest run in `root` (an empty config when the repo has none)."""
    config = repo_config(root, targets)
    rootdir = config.parent if config is not None else root.resolve()
    return [f"--rootdir={rootdir}", "-c", str(config) if config is not None else _EMPTY,
            f"--confcutdir={root.resolve()}", *(f"--ignore={link}" for link in outward_links(root))]


SKIP_WALK = {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".ph"}


def outward_links(root: Path) -> list[str]:
    """Symlinks in the repo that lead outside it (or nowhere): pytest is told to ignore them, so collection never
    walks out of the repo (in the sandbox it could not read there anyway, and would stop with an error)."""
    root = root.resolve()
    found, todo = [], [root]
    while todo:
        try:
            entries = list(os.scandir(todo.pop()))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                target = Path(os.path.realpath(entry.path))
                if target != root and root not in target.parents or not target.exists():
                    found.append(entry.path)
            elif entry.is_dir(follow_symlinks=False) and entry.name not in SKIP_WALK:
                todo.append(Path(entry.path))
    return sorted(found)


_EMPTY = "/dev/null"
"""An empty config: pytest reads no options from it (its name has no ini, cfg or toml suffix)."""


def unsafe_target(target: str) -> str:
    """Why `target` may not be passed to pytest ('' when it may): options and argument files are refused."""
    if target.lstrip().startswith(UNSAFE_START):
        return f"{target!r} is a pytest option or argument file, not a test file or node id"
    return ""


def _common_folder(root: Path, targets: list[str]) -> Path:
    """The deepest folder inside `root` holding every target (the root when a target is outside it or absent)."""
    folders = []
    for target in targets:
        path = (root / target.split("::")[0]).resolve()
        if path != root and root not in path.parents:
            return root
        folders.append(path if path.is_dir() else path.parent)
    if not folders:
        return root
    common = folders[0]
    while not all(f == common or common in f.parents for f in folders):
        common = common.parent
    return common
