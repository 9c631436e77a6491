"""The repo the model works in: the path policy (pyharness/workspace/paths.py), the write limit, atomic writes."""

import fnmatch
import hashlib
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from pyharness.errors import ActionError
from pyharness.workspace import gitops, ignore
from pyharness.workspace.paths import PolicyError, protected_rule, refuse
from pyharness.workspace.paths import resolve as resolve_path
from pyharness.workspace.treecache import TreeCache

# Refused for writes in fix mode (the tests and their config are the judge), beside what pytest collects.
TEST_PATTERNS = (
    "tests/*",
    "test/*",
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "pytest.ini",
    ".pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
    "sitecustomize.py",
    "usercustomize.py",
    "*.pth",
)
STARTUP_NAMES = ("conftest.py", "pytest.ini", ".pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml",
                 "sitecustomize.py", "usercustomize.py")
"""Files that change what pytest or Python does at start-up, wherever they sit (plus any `*.pth`)."""
MAX_READ_BYTES = 10_000_000
TEMP_SUFFIX = ".ph.tmp"
SKIP_DIRS = {
    ".git",
    ".ph",
    ".venv",
    "venv",
    "__pycache__",
    "node_modules",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    "build",
    "dist",
}


@dataclass
class WriteLimit:
    """How much one run may change."""

    max_bytes_per_write: int = 64_000
    """Most bytes a single write may carry: the new text that differs from the file's (all of it for a new file)."""
    max_files: int = 12
    """Distinct files a run may change."""
    max_changed_lines: int = 800
    """Lines added plus removed over the whole run."""
    max_overwrite_lines: int = 120
    """An existing file longer than this may not be rewritten whole: use edit."""
    max_run_bytes: int = 1_048_576
    """Bytes all writes of one run may carry together (counted as for `max_bytes_per_write`)."""


class Journal(Protocol):
    """Where a run keeps each file's bytes from before its first change (`pyharness.workspace.undo.UndoLog`)."""

    def save(self, rel: str, old: bytes | None, new: bytes | None = None) -> None: ...


class GuardedTests(Protocol):
    """Fix mode's tests and test config, which the run may not change (`pyharness.workspace.protect.TestGuard`)."""

    def files(self) -> list[str]: ...

    def changed_in(self, root: Path) -> list[str]: ...

    def verify(self, ws: "Workspace") -> str | None: ...


@dataclass
class Workspace:
    """A repo root plus the rules for touching it."""

    root: Path
    limit: WriteLimit = field(default_factory=WriteLimit)
    protect_tests: bool = False
    changed: dict[str, int] = field(default_factory=dict)
    """Relative path -> changed lines so far in this run."""
    read_files: set[str] = field(default_factory=set)
    """Relative paths the model has read (ask mode cites only these)."""
    undo: Journal | None = None
    """An `UndoLog` that saves each file's pre-run bytes before its first change."""
    test_files: set[str] = field(default_factory=set)
    """Files pytest collects (fix mode fills this from `pyharness.workspace.protect`); writes to them are refused."""
    guard: GuardedTests | None = None
    """Fix mode's `protect.TestGuard`: its files are mounted read-only in every test run and hashed after each."""
    bytes_written: int = 0
    """Bytes all writes of this run carried so far."""
    created_dirs: list[str] = field(default_factory=list)
    """Folders this run's writes created (repo-relative, parents first)."""
    originals: dict[str, bytes | None] = field(default_factory=dict, repr=False)
    """Each changed file's bytes before the run's first change to it (None: it did not exist), for `put_back`."""
    cache: TreeCache = field(default_factory=lambda: TreeCache(MAX_READ_BYTES), repr=False, compare=False)
    """Per-file facts refreshed by stat: a step reads only the files that changed."""
    emit: Callable[..., None] = field(default=lambda kind, **data: None, repr=False, compare=False)
    """The run's event sink: each write is announced as a `change` (path, before, after) for the view's diff."""

    def __post_init__(self):
        given = os.path.abspath(self.root)
        self.root = Path(os.path.realpath(self.root))
        self._aliases = (given,) if given != str(self.root) else ()

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """The real path inside the repo that a model-given path names, or PolicyError (an ActionError).

        The policy itself (containment on the real path, symlinks, protected names) is
        `pyharness.workspace.paths.resolve`;
        writes are further refused for gitignored files and, in fix mode, for tests and their config.
        """
        real = resolve_path(self.root, path, aliases=self._aliases)
        if not write:
            return real
        rel = self.rel(real)
        if rel == ".":
            raise refuse(path, "the repo root is a folder; give a file path")
        if write and self.protect_tests and self.is_test_path(rel):
            raise refuse(path, f"{rel} is a test or test config file; in fix mode the tests are the judge: "
                               "change the code")
        if gitops.ignored(self.root, [rel]):
            raise refuse(path, f"{rel} is ignored by git (.gitignore): build output and environments are not "
                               "edited; change the source instead")
        return real

    def rel(self, path: Path) -> str:
        """The repo-relative posix form of an absolute path ('.' for the root)."""
        return Path(path).relative_to(self.root).as_posix()

    def is_test_path(self, rel: str) -> bool:
        """True for test files (what pytest collects, or looks like a test) and pytest/Python start-up config."""
        name = rel.rsplit("/", 1)[-1]
        return (rel in self.test_files or name in STARTUP_NAMES or name.endswith(".pth")
                or any(fnmatch.fnmatch(rel, pat) for pat in TEST_PATTERNS) or "/tests/" in f"/{rel}")

    def files(self) -> list[str]:
        """Text files of the repo, sorted: not ignored (git, .gitignore, build output, environments, caches: see
        pyharness/workspace/ignore.py), not protected (.git, .ph, secrets), inside the repo."""
        return [name for name, _ in self._listing()]

    def _listing(self) -> list[tuple[str, bytes]]:
        """(name, content digest) of each file `files` lists."""
        names = gitops.listed_files(self.root)
        if names is None:
            names = ignore.walk(self.root)
        else:
            names = ignore.visible([n for n in names if not any(p in SKIP_DIRS for p in n.split("/"))])
        found = []
        for name in sorted(set(names)):
            if protected_rule(name.split("/")):
                continue
            try:
                real = resolve_path(self.root, name)
            except PolicyError:  # a link out of the repo, a loop, a link to a secret: not listed, not searched
                continue
            known = self.cache.entry(real)
            if known is not None and not known.binary:
                found.append((name, known.digest))
        return found

    def state_hash(self) -> str:
        """A hash of every file's path and content: changes whenever anything changes. A file is read only when
        its stat changed since the last hash (`TreeCache`), so a step costs one stat per file, not one read."""
        digest = hashlib.sha256()
        for name, content in self._listing():
            digest.update(name.encode() + b"\0" + content + b"\0")
        return digest.hexdigest()[:16]

    def read_text(self, path: str) -> str:
        """Read a repo file as text (newlines as \\n), or raise ActionError."""
        real = self.resolve(path)
        if not real.exists():
            raise ActionError(f"{path} does not exist; use list or search to find the file")
        if real.is_dir():
            raise ActionError(f"{path} is a directory; use list to see its files")
        if not real.is_file():
            raise refuse(path, "it is not a regular file (a device, pipe or socket)")
        if real.stat().st_size > MAX_READ_BYTES:
            raise refuse(path, f"the file is {real.stat().st_size} bytes, over the {MAX_READ_BYTES} bytes ph reads")
        known = self.cache.entry(real)  # known from the listing: no second open of the file
        if known is None or known.binary:
            raise refuse(path, "it is a binary file; only text files are read")
        return _decode(real.read_bytes())

    def write_text(self, path: str, content: str) -> tuple[str, str | None]:
        """Write a file atomically within the write limit; returns (rel path, old content or None).

        An existing file keeps its mode bits, its line endings (CRLF stays CRLF) and whether it ends in a newline.
        """
        real = self.resolve(path, write=True)
        rel = self.rel(real)
        if real.is_dir():
            raise refuse(path, "it is a folder; give a file path")
        if real.exists() and not real.is_file():
            raise refuse(path, "it is not a regular file")
        if "\0" in content:
            raise refuse(path, "the content holds NUL bytes; only text is written")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError:
            raise refuse(path, "the content is not valid text (invalid UTF-8 / lone surrogates)") from None
        raw = real.read_bytes() if real.exists() else None
        old = None if raw is None else _decode(raw)
        carried = _carried(old, content)
        if carried > self.limit.max_bytes_per_write:
            raise ActionError(
                f"write {rel} refused: {carried} bytes is over the limit of {self.limit.max_bytes_per_write} "
                "per write; split the change into edits"
            )
        if rel not in self.changed and len(self.changed) >= self.limit.max_files:
            raise ActionError(f"write {rel} refused: this run already changed {len(self.changed)} files (the limit "
                              f"of {self.limit.max_files}); finish with the files already changed")
        if self.bytes_written + carried > self.limit.max_run_bytes:
            raise ActionError(f"write {rel} refused: this run has written {self.bytes_written} bytes and the limit "
                              f"is {self.limit.max_run_bytes} per run")
        delta = _changed_lines(old or "", content)
        if sum(self.changed.values()) + delta > self.limit.max_changed_lines:
            raise ActionError(f"write {rel} refused: the run would change more than "
                              f"{self.limit.max_changed_lines} lines")
        if raw:
            content = _same_shape(raw, content)
        if self.undo is not None:
            self.undo.save(rel, raw, content.encode("utf-8"))
        self.originals.setdefault(rel, raw)
        made = _atomic_write(real, content)
        self.cache.forget(real)
        self.created_dirs += [self.rel(d) for d in made]
        self.bytes_written += carried
        self.changed[rel] = self.changed.get(rel, 0) + delta
        self.emit("change", path=rel, before=old, after=_decode(content.encode("utf-8")))
        return rel, old

    def put_back(self, rel: str, text: str | None) -> bool:
        """Return a file this run changed to `text` (None: to its bytes before the run, or gone if it did not exist),
        journalled for undo like any write but outside the write limits: it undoes the run's own writes. True when
        the file changed."""
        if rel not in self.originals:
            raise ActionError(f"{rel} was not changed by this run; nothing to put back")
        real = self.resolve(rel)
        raw = real.read_bytes() if real.is_file() else None
        original = self.originals[rel]
        shape = original or raw
        new = original if text is None else (_same_shape(shape, text) if shape else text).encode("utf-8")
        if new == raw:
            return False
        if self.undo is not None:
            self.undo.save(rel, raw, new)
        if new is None:
            real.unlink()
        else:
            _atomic_write(real, new)
        self.cache.forget(real)
        if new == original:  # as the run found it: no longer a change of this run's (its undo entry stays)
            self.changed.pop(rel, None)
        self.emit("change", path=rel, before=None if raw is None else _decode(raw),
                  after="" if new is None else _decode(new))
        return True

    def clean_stale_temps(self) -> list[str]:
        """Delete temp files a killed run left behind (`.NAME.*.ph.tmp`); returns what was removed."""
        removed = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
            for name in filenames:
                if name.startswith(".") and name.endswith(TEMP_SUFFIX):
                    path = Path(dirpath) / name
                    path.unlink(missing_ok=True)
                    removed.append(self.rel(path))
        return removed


def _carried(old: str | None, new: str) -> int:
    """The bytes a write carries: the new text outside what it shares with the old at both ends (all of it for a new
    file). An edit or a merged function in a 175 KB module carries its change, not the module."""
    if not old:
        return len(new.encode("utf-8"))
    head = len(os.path.commonprefix([old, new]))
    tail = min(len(os.path.commonprefix([old[::-1], new[::-1]])), min(len(old), len(new)) - head)
    return len(new[head:len(new) - tail].encode("utf-8"))


def _decode(raw: bytes) -> str:
    """Text with newlines as \\n (as Python's text mode reads it), undecodable bytes replaced."""
    return raw.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def _same_shape(raw: bytes, content: str) -> str:
    """`content` with the old file's line endings and final-newline state."""
    content = content.replace("\r\n", "\n")
    if raw.count(b"\r\n") * 2 > raw.count(b"\n"):
        content = content.replace("\n", "\r\n")
    ending = "\r\n" if content.endswith("\r\n") else "\n"
    if raw.endswith(b"\n") and content and not content.endswith("\n"):
        content += "\r\n" if raw.endswith(b"\r\n") else "\n"
    elif not raw.endswith(b"\n") and content.endswith("\n"):
        content = content[: -len(ending)]
    return content


def _changed_lines(old: str, new: str) -> int:
    import difflib

    return sum(1 for line in difflib.ndiff(old.splitlines(), new.splitlines()) if line[:1] in "+-")


def _atomic_write(path: Path, content: str | bytes) -> list[Path]:
    """Write through a temp file in the same folder, fsync, then rename over the target; returns folders made."""
    made = []
    parent = path.parent
    while not parent.exists():
        made.append(parent)
        parent = parent.parent
    made.reverse()
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=TEMP_SUFFIX)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode if mode is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return made


def _umask() -> int:
    """The process umask (read by setting and restoring it: there is no getter)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
