"""Whose Python runs the repo's code: the project's own interpreter, chosen once per run and said on stderr.

A real project has its own environment (a `.venv` with its dependencies); ph's own interpreter knows none of them,
so every run of repo code (pytest runs, fix-mode collection, traces and the spectrum, scratch candidate checks,
add-mode trials) uses the interpreter chosen here. First match wins:

1. `--python PATH` (fix, add, run, demo, eval);
2. `PH_PYTHON`;
3. `python = "..."` in the user config file;
4. an active virtualenv or conda env (`$VIRTUAL_ENV`, `$CONDA_PREFIX`), unless it is the one ph itself runs in
   (a ph installed in its own venv and activated there is not the project's environment);
5. a virtualenv inside the repo: `.venv/`, `venv/`, `env/`, each recognised by its `pyvenv.cfg`;
6. ph's own interpreter.

A repo's `[tool.ph]` may not choose it (the repo is not trusted with what runs outside the sandbox). A venv found in
the repo is the repo's own program: it is asked about itself inside the sandbox, and what it reports widens the
sandbox only inside the repo and the installation it links to (`sandbox.distrust`).
"""

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pyharness.errors import UserError
from pyharness.workspace import sandbox

REPO_VENVS = (".venv", "venv", "env")
"""Folders inside a repo that hold its virtualenv, in the order they are tried."""


@dataclass(frozen=True)
class Interpreter:
    """The interpreter that runs the repo's code, and why it was chosen."""

    path: str
    source: str
    """Why it was chosen: '--python', 'env PH_PYTHON', 'user config FILE', 'VIRTUAL_ENV', 'CONDA_PREFIX',
    "the repo's .venv/", "ph's own"."""
    version: str = ""
    pytest: str = ""
    """pytest's version there ('' when it has none)."""

    @property
    def own(self) -> bool:
        """True when this is the interpreter ph itself runs on."""
        return self.path == sys.executable

    def describe(self) -> str:
        """One line: path, versions and where the choice came from."""
        pytest = f"pytest {self.pytest}" if self.pytest else "no pytest"
        return f"python: {self.path} (Python {self.version}, {pytest}; from {self.source})"


def choose(root: Path | None, named: tuple[str, str] | None = None, env: Mapping[str, str] | None = None,
           need_pytest: bool = True) -> Interpreter:
    """The interpreter for a run in `root` (None: no repo), by the order in the module docstring. `named` is (value,
    where it came from) when the user named one (`--python`, PH_PYTHON or the user config file: pyharness.cli.config
    finds which). A named interpreter that is missing or not a Python, and (with `need_pytest`) one without pytest,
    is a one-line UserError; nothing has run yet."""
    env = os.environ if env is None else env
    path, source = (_named(*named), named[1]) if named else _found(root, env)
    if source.startswith("the repo's"):
        sandbox.distrust(path, root)
    probe = sandbox.probe(path)
    if probe.problem:
        raise UserError(f"{source}: {probe.problem}")
    chosen = Interpreter(path, source, probe.version, probe.pytest)
    if need_pytest and not chosen.pytest:
        raise UserError(f"{path} (from {source}) has no pytest, which runs the repo's tests: install it with "
                        f"`{path} -m pip install pytest`")
    return chosen


def _found(root: Path | None, env: Mapping[str, str]) -> tuple[str, str]:
    """(path, source) when the user named none: an active environment, the repo's venv, else ph's own."""
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(name)
        exe = _in_prefix(Path(prefix)) if prefix else None
        if exe is not None and not _is_own(exe):
            return str(exe), name
    if root is not None:
        for folder in REPO_VENVS:
            venv = Path(root) / folder
            exe = _in_prefix(venv) if (venv / "pyvenv.cfg").is_file() else None
            if exe is not None:
                return str(exe), f"the repo's {folder}/"
    return sys.executable, "ph's own"


def _named(value: str, source: str) -> str:
    """An interpreter the user named: a path (made absolute, `~` expanded), or a name looked up on PATH."""
    path = Path(value).expanduser()
    if os.sep not in value and not path.exists():
        import shutil

        found = shutil.which(value)
        if found:
            return found
    if not path.is_file():
        raise UserError(f"{source}: {value} is not a file (give the path of a Python, e.g. .venv/bin/python)")
    if not os.access(path, os.X_OK):
        raise UserError(f"{source}: {value} is not executable")
    return str(path.absolute())


def _in_prefix(prefix: Path) -> Path | None:
    """The python executable of an environment's prefix (POSIX bin/, Windows Scripts/ or the conda root)."""
    for rel in ("bin/python", "bin/python3", "Scripts/python.exe", "python.exe"):
        exe = prefix / rel
        if exe.is_file() and os.access(exe, os.X_OK):
            return exe.absolute()
    return None


def _is_own(exe: Path) -> bool:
    """True when `exe` belongs to the environment ph runs in (its venv or its installation)."""
    own = {Path(sys.prefix).resolve(), Path(sys.executable).parent.parent.resolve()}
    return exe.parent.parent.resolve() in own
