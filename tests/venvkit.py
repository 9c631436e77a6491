"""Real virtualenvs for tests of the project's own Python: made with `venv`, their packages copied from ph's own
environment (the same Python version, so no network and no build), or installed with pip where a test needs another
Python version."""

import importlib.metadata
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

WITH_PYTEST = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")
"""pytest and what it needs, as distributions."""
HYPOTHESIS = ("hypothesis", "attrs", "sortedcontainers")
"""hypothesis (a pytest plugin, loaded through its `pytest11` entry point) and what it needs."""


def make_venv(folder: Path, dists: tuple[str, ...] = WITH_PYTEST, modules: dict[str, str] | None = None) -> Path:
    """A venv at `folder` made from the Python ph runs on, holding the distributions `dists` (copied file by file
    from ph's environment, with their metadata) and the one-file `modules` {name: source}; its python's path."""
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, capture_output=True)
    site = site_packages(folder)
    for name in dists:
        dist = importlib.metadata.distribution(name)
        for rel in dist.files or ():
            source = Path(dist.locate_file(rel))
            if source.is_file() and "__pycache__" not in rel.parts and not str(rel).startswith(".."):
                target = site / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
    for name, text in (modules or {}).items():
        (site / f"{name}.py").write_text(text, encoding="utf-8")
    return folder / "bin" / "python"


def site_packages(venv: Path) -> Path:
    """The venv's site-packages folder."""
    return next((venv / "lib").glob("python3*/site-packages"))


def other_python(version: str) -> str | None:
    """The path of a Python `version` (e.g. '3.8') on this machine (PATH or pyenv), or None."""
    for root in sorted(Path.home().glob(f".pyenv/versions/{version}.*"), reverse=True):
        exe = root / "bin" / "python"
        if exe.is_file():
            return str(exe)
    found = shutil.which(f"python{version}")
    return found if found and "/shims/" not in found else None  # a pyenv shim of a version not installed fails


def pip_venv(folder: Path, python: str, packages: list[str]) -> Path:
    """A venv made with `python`, `packages` installed by pip from the package index (or its cache); skips the test
    with pip's last line when they cannot be installed here."""
    subprocess.run([python, "-m", "venv", str(folder)], check=True, capture_output=True)
    exe = folder / "bin" / "python"
    done = subprocess.run([str(exe), "-m", "pip", "install", "-q", "--disable-pip-version-check", *packages],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        pytest.skip(f"pip could not install {packages} for {python}: "
                    f"{(done.stderr.strip().splitlines() or ['?'])[-1]}")
    return exe
