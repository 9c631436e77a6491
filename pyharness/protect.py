"""Fix mode's judge is the test suite: which files it is made of (pytest says), and proof they were not touched.

At the start of a fix run pytest is asked which files it would collect (`--collect-only`, in its own process
session with a timeout and a scrubbed environment); those, plus every conftest.py, pytest/python start-up
config (`pytest.ini`, `.pytest.ini`, `pyproject.toml`, `setup.cfg`, `tox.ini`, `sitecustomize.py`,
`usercustomize.py`, `*.pth`) and anything that looks like a test, are refused for writes and hashed. After the
run they are hashed again: a change (by the model, or by code the tests ran) makes the run invalid.
"""

import hashlib
import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.workspace import SKIP_DIRS, Workspace

COLLECT_TIMEOUT = 60.0
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSWORD|PASSWD|KEY|AUTH|CREDENTIAL|PRIVATE|CERT", re.IGNORECASE)
NODE = re.compile(r"^([^\s:][^:]*?)::", re.MULTILINE)
ERRORED = re.compile(r"^ERROR (?:collecting )?(\S+?\.py)\b", re.MULTILINE)


def collected_files(root: Path, *, python: str | None = None, timeout: float = COLLECT_TIMEOUT) -> set[str]:
    """Repo-relative files pytest would collect tests from (empty when it cannot say)."""
    cmd = [python or sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
           f"--rootdir={root}"]
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    env.update({"PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"})
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        raw, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        return set()
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    finally:
        _kill_group(proc)  # whatever collection left running in the session goes too
    text = raw[:2_000_000].decode("utf-8", errors="replace")
    found = set()
    for name in NODE.findall(text) + ERRORED.findall(text):
        path = (Path(root) / name).resolve()
        if path.is_file() and path.is_relative_to(root):
            found.add(path.relative_to(root).as_posix())
    return found


def _kill_group(proc: subprocess.Popen) -> None:
    """TERM, then KILL, the process group pytest leads (it has its own session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            return
        try:
            proc.wait(timeout=1)
        except subprocess.TimeoutExpired:
            continue


@dataclass
class TestGuard:
    """The hashes of fix mode's protected files at the start of a run."""

    root: Path
    hashes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, ws: Workspace, *, python: str | None = None) -> "TestGuard":
        """Ask pytest for its test files, protect them in the workspace, and hash every protected file."""
        ws.test_files = collected_files(ws.root, python=python)
        guard = cls(root=ws.root)
        guard.hashes = {rel: _hash(ws.root / rel) for rel in protected_files(ws)}
        return guard

    def verify(self, ws: Workspace) -> str | None:
        """None when every protected file is as it was; else one line naming what changed, appeared or went."""
        now = {rel: _hash(ws.root / rel) for rel in protected_files(ws) | set(self.hashes)}
        changed = sorted(rel for rel, h in now.items() if rel in self.hashes and h != self.hashes[rel] and h)
        removed = sorted(rel for rel, h in now.items() if rel in self.hashes and not h)
        added = sorted(rel for rel, h in now.items() if rel not in self.hashes and h)
        parts = [f"{what}: {', '.join(names)}" for what, names in
                 (("changed", changed), ("removed", removed), ("added", added)) if names]
        if not parts:
            return None
        return "test files or test config were touched during the run (" + "; ".join(parts) + ")"


def protected_files(ws: Workspace) -> set[str]:
    """Every file fix mode protects that exists now: pytest's test files, conftest.py, start-up config, *.pth."""
    found = set(ws.test_files)
    for dirpath, dirnames, filenames in os.walk(ws.root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and d not in (".ph",)]
        for name in filenames:
            rel = (Path(dirpath) / name).relative_to(ws.root).as_posix()
            if ws.is_test_path(rel):
                found.add(rel)
    return found


def _hash(path: Path) -> str:
    """sha256 of a file's bytes (links not followed: a swapped-in link counts as a change); '' when absent."""
    try:
        if path.is_symlink():
            return "link:" + os.readlink(path)
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return ""
