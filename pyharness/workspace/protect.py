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
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.workspace.procs import clean_env, run_tree
from pyharness.workspace.pytestconfig import pinned_args
from pyharness.workspace.tree import SKIP_DIRS, Workspace

COLLECT_TIMEOUT = 60.0
HASH_CAP = 64 << 20
"""Bytes of one protected file that are read to hash it."""
COLLECT_CAP = 2_000_000
"""Bytes of collection output read (a huge suite's listing beyond this is not needed to name its files)."""
NODE = re.compile(r"^([^\s:][^:]*?)::", re.MULTILINE)
ERRORED = re.compile(r"^ERROR (?:collecting )?(\S+?\.py)\b", re.MULTILINE)


def collected_files(root: Path, *, python: str | None = None, timeout: float = COLLECT_TIMEOUT,
                    tests: list[str] | None = None, readonly: list[str] | None = None) -> set[str]:
    """Repo-relative files pytest would collect tests from (empty when it cannot say); with `tests` (the ones
    `ph fix TESTS...` names, which are then the whole suite the run is judged by), only those are collected: on a
    large tree (sympy) collecting everything takes longer than the timeout and would name nothing. Collecting runs
    repo code: in the sandbox, with the files `readonly` mounted read-only, pytest's configuration pinned."""
    cmd = [python or sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
           *pinned_args(root, list(tests or [])), *(["--", *tests] if tests else [])]
    out = bytearray()
    done = run_tree(cmd, cwd=root, env=clean_env({"PYTHONDONTWRITEBYTECODE": "1", "NO_COLOR": "1"}),
                    timeout=timeout, sink=lambda data: out.extend(data[:max(0, COLLECT_CAP - len(out))]),
                    readonly=[Path(root) / rel for rel in readonly or []])
    if done.timed_out:
        return set()
    text = bytes(out).decode("utf-8", errors="replace")
    found = set()
    for name in NODE.findall(text) + ERRORED.findall(text):
        path = (Path(root) / name).resolve()
        if path.is_file() and path.is_relative_to(root):
            found.add(path.relative_to(root).as_posix())
    return found


@dataclass
class TestGuard:
    """The hashes of fix mode's protected files at the start of a run."""

    root: Path
    hashes: dict[str, str] = field(default_factory=dict)

    @classmethod
    def start(cls, ws: Workspace, *, python: str | None = None, tests: list[str] | None = None) -> "TestGuard":
        """Ask pytest for its test files (of `tests` when the job names them), protect them in the workspace, and
        hash every protected file."""
        before = {rel: _hash(ws.root / rel) for rel in _walk(ws.root)}  # collecting runs repo code: hash first
        looks = [rel for rel, h in before.items() if _regular(h) and ws.is_test_path(rel)]
        ws.test_files = collected_files(ws.root, python=python, tests=tests, readonly=looks)
        guard = cls(root=ws.root)
        guard.hashes = {rel: before.get(rel, "") for rel in protected_files(ws)}
        return guard

    def files(self) -> list[str]:
        """The protected files that existed at the start (repo-relative): test runs mount them read-only."""
        return sorted(rel for rel, h in self.hashes.items() if _regular(h))

    def changed_in(self, root: Path) -> list[str]:
        """The protected files whose bytes in `root` (the tree or a scratch copy of it) differ from the start."""
        return [rel for rel, h in sorted(self.hashes.items()) if _hash(Path(root) / rel) != h]

    def verify(self, ws: Workspace) -> str | None:
        """None when every protected file is as it was; else one line naming what changed, appeared or went."""
        now = {rel: _hash(ws.root / rel) for rel in protected_files(ws) | set(self.hashes)}
        moved = {rel: (self.hashes.get(rel, ""), h) for rel, h in sorted(now.items()) if self.hashes.get(rel, "") != h}
        changed = [rel for rel, (old, new) in moved.items() if old and new]
        removed = [rel for rel, (old, new) in moved.items() if not new]
        added = [rel for rel, (old, new) in moved.items() if not old]
        parts = [f"{what}: {', '.join(names)}" for what, names in
                 (("changed", changed), ("removed", removed), ("added", added)) if names]
        if not parts:
            return None
        return "test files or test config were touched during the run (" + "; ".join(parts) + ")"


def protected_files(ws: Workspace) -> set[str]:
    """Every file fix mode protects that exists now: pytest's test files, conftest.py, start-up config, *.pth."""
    return set(ws.test_files) | {rel for rel in _walk(ws.root) if ws.is_test_path(rel)}


def _walk(root: Path) -> list[str]:
    """Every file under root (repo-relative), links not followed, build and environment folders skipped."""
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        found += [(Path(dirpath) / name).relative_to(root).as_posix() for name in filenames]
    return found


def _hash(path: Path) -> str:
    """sha256 of a regular file's bytes; `link:TARGET` for a symlink (never followed: a swapped-in link counts as a
    change), `special:TYPE` for a FIFO, device or socket (never opened: a FIFO would block), '' when absent. A file
    over HASH_CAP bytes is hashed by its first HASH_CAP bytes, size and mtime (a sparse multi-GB file is not read
    to its end)."""
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            return "link:" + os.readlink(path)
        if not stat.S_ISREG(st.st_mode):
            return f"special:{stat.S_IFMT(st.st_mode):o}"
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return ""
    digest = hashlib.sha256()
    with os.fdopen(fd, "rb") as f:
        now = os.fstat(f.fileno())
        if not stat.S_ISREG(now.st_mode):  # swapped between the lstat and the open
            return f"special:{stat.S_IFMT(now.st_mode):o}"
        left = HASH_CAP
        while left > 0:
            chunk = f.read(min(left, 1 << 20))
            if not chunk:
                break
            digest.update(chunk)
            left -= len(chunk)
        if now.st_size > HASH_CAP:
            digest.update(f"\0{now.st_size}:{now.st_mtime_ns}".encode())
    return digest.hexdigest()


def _regular(digest: str) -> bool:
    """True for the hash of a regular file (not absent, a link or a special file)."""
    return bool(digest) and not digest.startswith(("link:", "special:"))
