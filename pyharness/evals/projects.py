"""The real projects mutants are seeded into: pinned, permissively licensed pure-Python sdists (they carry their
tests), fetched from the package index on first use, checked against a pinned sha256 and unpacked into the user
cache, never into the repo."""

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pyharness.errors import UserError

LARGE_TREE = 500
"""A project with at least this many Python files counts as a large tree (reported on its own)."""


@dataclass(frozen=True)
class Project:
    """A pinned, permissively licensed pure-Python project whose sdist carries its tests."""

    name: str
    version: str
    sha256: str
    license: str
    packages: tuple[str, ...]
    """Folders (relative to the sdist root) whose modules are mutated."""
    python_files: int
    """How many .py files the sdist holds (a large tree has >= LARGE_TREE)."""

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


PROJECTS = {p.name: p for p in (
    Project("toolz", "1.2.0", "9667a038e9d6ecba37995e26cb2f59ec6420b6ad8dd9677de59db9b956b08490", "BSD-3-Clause",
            ("toolz",), 33),
    Project("more-itertools", "11.2.1", "cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63", "MIT",
            ("more_itertools",), 7),
    Project("boltons", "26.2.0", "d39cfd15c1a1c3bd4d705c82252fa9edb8e4f5e8cc039f8e39afac7b1b47e92c", "BSD-3-Clause",
            ("boltons",), 61),
    Project("sympy", "1.14.0", "d3d3fe8df1e5a0b42f0e7bdf50541697dbe7d23746e894990c030e2b05e72517", "BSD-3-Clause",
            ("sympy/utilities", "sympy/ntheory", "sympy/combinatorics", "sympy/logic", "sympy/strategies",
             "sympy/sets", "sympy/discrete", "sympy/calculus", "sympy/multipledispatch", "sympy/unify"), 1543),
)}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""


def cache_root() -> Path:
    """Where fetched and unpacked projects live (never in the repo)."""
    from pyharness.models.packs import cache_dir

    return cache_dir() / "mutants"


def fetch(project: Project, cache: Path | None = None) -> Path:
    """The unpacked sdist of a pinned project, downloaded on first use; UserError when it cannot be had."""
    cache = cache or cache_root()
    tree = cache / project.key
    if (tree / ".ph-verified").is_file():
        return tree
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
             "--disable-pip-version-check", "-d", tmp, f"{project.name}=={project.version}"],
            capture_output=True, text=True, timeout=600, check=False)
        archives = sorted(Path(tmp).glob("*.tar.gz"))
        if done.returncode != 0 or not archives:
            last = (done.stderr.strip().splitlines() or ["no sdist downloaded"])[-1]
            raise UserError(f"cannot fetch {project.key} (pip download failed: {last})")
        return unpack(archives[0], project, cache)


def unpack(archive: Path, project: Project, cache: Path) -> Path:
    """Check an sdist against the pinned sha256 and unpack it as CACHE/NAME-VERSION (marked verified)."""
    tree = cache / project.key
    cache.mkdir(parents=True, exist_ok=True)
    digest = sha256_of(archive)
    if digest != project.sha256:
        raise UserError(f"{project.key}: the sdist's sha256 is {digest}, pinned {project.sha256}")
    with tempfile.TemporaryDirectory(dir=cache, prefix=".unpack-") as tmp:
        with tarfile.open(archive) as sdist:
            sdist.extractall(tmp, filter="data")
        top = [p for p in Path(tmp).iterdir() if p.is_dir()]
        if len(top) != 1:
            raise UserError(f"{project.key}: the sdist does not hold one top folder")
        shutil.rmtree(tree, ignore_errors=True)
        shutil.move(str(top[0]), tree)
    (tree / ".ph-verified").write_text(project.sha256 + "\n", encoding="utf-8")
    return tree
