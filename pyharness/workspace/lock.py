"""One ph run per repo at a time, and the place outside the repo where ph keeps a repo's private state.

The state dir is `$PH_STATE_DIR` (else the user state dir) plus `repos/<sha256 of the repo's real path>`. Nothing
inside the repo points at it, so neither the model (its writes are confined to the repo) nor a repo someone ships
can plant or change what is kept there (the undo journal, the lock).
State expires by age only (`STATE_MAX_AGE` after anything in it was last written): whether its repo is at its path
does not count, so a repo that is moved away and back, or on a drive not mounted when another repo makes its state,
finds its undo journals again. Expired state is pruned whenever a new repo's state dir is made.

The lock is an `flock` on `lock` in that dir, held for the whole run. The kernel drops it when its process ends, so
a lock left by a killed run (its file still naming a dead pid) is taken over by the next run, and two runs racing
for a stale lock cannot both win. The pid written in the file only serves to name the holder in the refusal.
"""

import fcntl
import hashlib
import json
import os
import shutil
import time
from datetime import UTC, datetime
from pathlib import Path

from pyharness.errors import UserError

STATE_MAX_AGE = 30 * 24 * 3600.0
"""Seconds a repo's state (its undo journals, its lock) is kept after it was last written: 30 days. The only reason
ph deletes a journal; a repo absent at that moment (moved, renamed, unmounted) is never one."""


def state_root() -> Path:
    """Where ph keeps per-repo state: $PH_STATE_DIR, else the user state dir."""
    if env := os.environ.get("PH_STATE_DIR"):
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_state_dir("pyharness"))


def repo_state_dir(root: Path) -> Path:
    """The private state dir of one repo (created 0700), never inside the repo itself."""
    real = os.path.realpath(root)
    base = Path(os.path.realpath(state_root()))
    if os.path.commonpath([real, base]) == real:
        raise UserError(f"ph's state dir {base} is inside the repo {real}; set PH_STATE_DIR to a directory outside it")
    path = base / "repos" / hashlib.sha256(real.encode("utf-8", "surrogateescape")).hexdigest()[:32]
    if not path.is_dir():
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        (path / "repo").write_text(real, encoding="utf-8", errors="surrogateescape")
        _prune(path.parent)
    return path


def _prune(repos: Path) -> None:
    """Drop the state nothing was written to for STATE_MAX_AGE (eval and demo runs leave one per temp repo), whether
    or not its repo is at its path now."""
    cutoff = time.time() - STATE_MAX_AGE
    for folder in repos.iterdir():
        try:
            if folder.is_dir() and not folder.is_symlink() and _last_written(folder) < cutoff:
                shutil.rmtree(folder)
        except OSError:  # another ph pruned it first, or it is not ours to read: leave it
            continue


def _last_written(folder: Path) -> float:
    """The newest mtime of the folder and of anything under it (links not followed): a run or an undo writes the lock,
    a run writes its journal, and a state dir being made is new itself."""
    newest = folder.lstat().st_mtime
    for dirpath, dirnames, filenames in os.walk(folder):
        for name in dirnames + filenames:
            newest = max(newest, os.lstat(os.path.join(dirpath, name)).st_mtime)
    return newest


class RepoLock:
    """Held while a run (or an undo) works on a repo; a second one on the same repo is refused."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.path = repo_state_dir(self.root) / "lock"
        self.took_over: int | None = None
        """The dead pid whose lock file this one took over, if any."""
        self._fd: int | None = None

    def acquire(self) -> "RepoLock":
        """Take the lock, or raise UserError naming the run that holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder(fd)
            os.close(fd)
            since = f", started {holder['started']}" if holder.get("started") else ""
            who = f"pid {holder['pid']}{since}" if holder.get("pid") else "pid unknown"
            raise UserError(f"another ph run ({who}) is working on {self.root}; one run per repo at a time: "
                            "wait for it to finish") from None
        previous = _holder(fd).get("pid")
        if isinstance(previous, int) and previous != os.getpid():
            self.took_over = previous
        os.ftruncate(fd, 0)
        os.pwrite(fd, json.dumps({"pid": os.getpid(), "started": datetime.now(UTC).isoformat(timespec="seconds"),
                                  "repo": str(self.root)}).encode("utf-8"), 0)
        self._fd = fd
        return self

    def release(self) -> None:
        """Let the next run in (the file stays; an empty one means nobody holds it)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        os.ftruncate(fd, 0)
        os.close(fd)  # closing drops the flock

    def __enter__(self) -> "RepoLock":
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()


def _holder(fd: int) -> dict:
    try:
        data = json.loads(os.pread(fd, 4096, 0).decode("utf-8") or "{}")
    except (ValueError, OSError):
        return {}
    return data if isinstance(data, dict) else {}
