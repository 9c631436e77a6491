"""The repo the model works in: one path policy, the write limit, atomic writes."""

import fnmatch
import hashlib
import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.errors import ActionError

# Refused in every mode, even when absent; matched against each path part, case-insensitively.
PROTECTED_PARTS = (".git", ".ph", ".env", ".env.*", ".venv", "*.pem", "*.key", "id_rsa*", ".ssh")
# Refused for writes in fix mode (the tests and their config are the judge).
TEST_PATTERNS = (
    "tests/*",
    "test/*",
    "test_*.py",
    "*_test.py",
    "conftest.py",
    "pytest.ini",
    "tox.ini",
    "setup.cfg",
    "pyproject.toml",
)
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
    """Largest content a single write may carry."""
    max_files: int = 12
    """Distinct files a run may change."""
    max_changed_lines: int = 800
    """Lines added plus removed over the whole run."""
    max_overwrite_lines: int = 120
    """An existing file longer than this may not be rewritten whole: use edit."""


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
    undo: object | None = None
    """An `UndoLog` that saves each file's pre-run bytes before its first change."""

    def __post_init__(self):
        self.root = Path(os.path.realpath(self.root))

    def resolve(self, path: str, *, write: bool = False) -> Path:
        """Turn a model-given path into an absolute path inside the repo, or raise ActionError."""
        if not isinstance(path, str) or not path.strip():
            raise ActionError('path is empty: give a path relative to the repo root, e.g. "orders/core.py"')
        if any(ord(c) < 32 for c in path):
            raise ActionError(f"path {path!r} contains control characters")
        text = path.strip()
        text = text.removeprefix("./")
        candidate = Path(text) if os.path.isabs(text) else self.root / text
        real = Path(os.path.realpath(candidate))
        if real != self.root and self.root not in real.parents:
            raise ActionError(f"{path} is outside the repo; use paths relative to the repo root")
        rel = real.relative_to(self.root).as_posix() if real != self.root else "."
        lexical = Path(os.path.normpath(candidate))
        if lexical.is_symlink() and not lexical.exists():
            raise ActionError(f"{path} is a dangling symlink; refused")
        for part in rel.split("/"):
            if any(fnmatch.fnmatch(part.lower(), pat) for pat in PROTECTED_PARTS):
                raise ActionError(f"{path} is protected (version control, harness state, secrets); refused")
        if write and self.protect_tests and self.is_test_path(rel):
            raise ActionError(
                f"{rel} is a test or test config file; in fix mode the tests are the judge: change the code"
            )
        return real

    def rel(self, path: Path) -> str:
        """The repo-relative posix form of an absolute path."""
        return path.relative_to(self.root).as_posix()

    @staticmethod
    def is_test_path(rel: str) -> bool:
        """True for test files and pytest configuration."""
        return any(fnmatch.fnmatch(rel, pat) for pat in TEST_PATTERNS) or "/tests/" in f"/{rel}"

    def files(self) -> list[str]:
        """Text files of the repo (tracked by git when it is a git repo), sorted."""
        try:
            out = subprocess.run(
                ["git", "ls-files", "-co", "--exclude-standard"],
                cwd=self.root,
                capture_output=True,
                text=True,
                timeout=20,
                check=True,
            ).stdout.splitlines()
            names = [n for n in out if n and not any(p in SKIP_DIRS for p in n.split("/"))]
        except (subprocess.SubprocessError, OSError):
            names = []
            for dirpath, dirnames, filenames in os.walk(self.root):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
                for name in filenames:
                    names.append((Path(dirpath) / name).relative_to(self.root).as_posix())
        return sorted(n for n in set(names) if (self.root / n).is_file() and not _binary(self.root / n))

    def state_hash(self) -> str:
        """A hash of every file's path and content: changes whenever the model changes anything."""
        digest = hashlib.sha256()
        for name in self.files():
            digest.update(name.encode() + b"\0" + (self.root / name).read_bytes() + b"\0")
        return digest.hexdigest()[:16]

    def read_text(self, path: str) -> str:
        """Read a repo file as text, or raise ActionError."""
        real = self.resolve(path)
        if not real.exists():
            raise ActionError(f"{path} does not exist; use list or search to find the file")
        if real.is_dir():
            raise ActionError(f"{path} is a directory; use list to see its files")
        if _binary(real):
            raise ActionError(f"{path} is a binary file")
        return real.read_text(encoding="utf-8", errors="replace")

    def write_text(self, path: str, content: str) -> tuple[str, str | None]:
        """Write a file atomically within the write limit; returns (rel path, old content or None)."""
        real = self.resolve(path, write=True)
        rel = self.rel(real)
        if real.is_dir():
            raise ActionError(f"{path} is a directory")
        data = content.encode("utf-8")
        if len(data) > self.limit.max_bytes_per_write:
            raise ActionError(
                f"write refused: {len(data)} bytes is over the limit of {self.limit.max_bytes_per_write} "
                "per write; split the change into edits"
            )
        old = real.read_text(encoding="utf-8", errors="replace") if real.exists() else None
        if rel not in self.changed and len(self.changed) >= self.limit.max_files:
            raise ActionError(f"write refused: this run already changed {len(self.changed)} files (the limit)")
        delta = _changed_lines(old or "", content)
        if sum(self.changed.values()) + delta > self.limit.max_changed_lines:
            raise ActionError(f"write refused: the run would change more than {self.limit.max_changed_lines} lines")
        if old is not None:
            if "\r\n" in old and "\r\n" not in content:
                content = content.replace("\n", "\r\n")
            if old.endswith("\n") and not content.endswith("\n"):
                content += "\n"
        if self.undo is not None:
            self.undo.save(rel, real.read_bytes() if real.exists() else None, content.encode("utf-8"))
        _atomic_write(real, content)
        self.changed[rel] = self.changed.get(rel, 0) + delta
        return rel, old


def _binary(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return b"\0" in f.read(4096)
    except OSError:
        return True


def _changed_lines(old: str, new: str) -> int:
    import difflib

    return sum(1 for line in difflib.ndiff(old.splitlines(), new.splitlines()) if line[:1] in "+-")


def _atomic_write(path: Path, content: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode & 0o7777 if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(content)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
