"""Undo: a journal of every file a run changes, written before each change; `ph undo` puts the pre-run state back.

What is kept: for each file the run touched, its pre-run bytes and mode (or that it did not exist), the sha256 of
everything the run wrote to it, and the directories the run created. Only files the run touched are saved, so the
user's other uncommitted work is never involved, and a user's uncommitted edit to a file ph then changed comes back
as the user left it (not as HEAD has it). Nothing touches git: no commit, no stash, no index, no hooks, so undo works
the same in a directory that is not a git repo.

Where it lives: in ph's per-repo state dir outside the repo (`lock.repo_state_dir`), out of reach of the model's
writes and of anything shipped inside a repo; a `.ph/undo/` in a repo is never read. Each entry is still resolved
with the workspace's path policy and refused if it leaves the repo, is protected, or passes through a symlink.

When: the journal is rewritten (temp file, fsync, rename) *before* each write, so after Ctrl-C or `kill -9` between
or during writes, `ph undo` restores the state before the run. A file that holds neither its pre-run content nor
anything the run wrote was changed after the run: undo refuses and names it, unless `--force`.

How long: a journal is kept `lock.STATE_MAX_AGE` (30 days) after it was written, then expires (deleted at the next
run or undo in its repo, or with the rest of the repo's state). Age is the only reason: a repo that is absent for a
while (moved, unmounted) keeps its journals.

Not applicable here (aider's commit-based undo refuses when "the last commit is not ph's" or "is already pushed"):
ph never commits the user's work, so there is no ph commit to check or to have pushed; `ph undo` reverts the newest
run's journal, and runs before it can be undone in turn, newest first.
"""

import base64
import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

from pyharness.errors import ActionError, UserError
from pyharness.workspace.lock import STATE_MAX_AGE, RepoLock, repo_state_dir


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def journal_dir(root: Path) -> Path:
    """Where the undo journals of this repo are kept (outside the repo)."""
    path = repo_state_dir(root) / "undo"
    path.mkdir(exist_ok=True, mode=0o700)
    return path


class UndoLog:
    """The journal of one run: pre-run content and mode of every file it changed, and what it wrote there."""

    def __init__(self, root: Path, run_id: str):
        self.root = Path(os.path.realpath(root))
        self.run_id = run_id
        self.path: Path | None = None
        """The journal file (made on the first write of the run)."""
        self.files: dict[str, dict] = {}
        self.dirs: list[str] = []

    def save(self, rel: str, old: bytes | None, new: bytes | None = None) -> None:
        """Record, before it happens, that the run writes `new` to rel (old: its bytes now, None if absent)."""
        entry = self.files.get(rel)
        if entry is None:
            target = self.root / rel
            mode = os.lstat(target).st_mode & 0o7777 if old is not None else None
            entry = self.files[rel] = {"old": None if old is None else base64.b64encode(old).decode("ascii"),
                                       "mode": mode, "wrote": []}
            self.dirs.extend(d for d in self._missing_dirs(target) if d not in self.dirs)
        if new is not None:
            entry["wrote"].append(_digest(new))
        self._flush()

    def _missing_dirs(self, target: Path) -> list[str]:
        missing = []
        parent = target.parent
        while parent != self.root and self.root in parent.parents and not os.path.lexists(parent):
            missing.append(parent.relative_to(self.root).as_posix())
            parent = parent.parent
        return missing

    def _flush(self) -> None:
        if self.path is None:
            expire(self.root)
            self.path = journal_dir(self.root) / f"{self.run_id}.json"
        record = {"repo": str(self.root), "run": self.run_id, "files": self.files, "dirs": self.dirs}
        _atomic_bytes(self.path, json.dumps(record, indent=1).encode("utf-8"), 0o600)


def pending(root: Path) -> list[Path]:
    """Undo journals not applied yet, newest first (regular files only)."""
    folder = journal_dir(root)
    return sorted((p for p in folder.glob("*.json") if p.is_file() and not p.is_symlink()), reverse=True)


def expire(root: Path) -> int:
    """Delete this repo's journals, applied or not, written over STATE_MAX_AGE ago; returns how many were pending."""
    cutoff = time.time() - STATE_MAX_AGE
    expired = 0
    for path in journal_dir(root).iterdir():
        if path.suffix in (".json", ".applied") and path.is_file() and not path.is_symlink() \
                and path.lstat().st_mtime < cutoff:
            path.unlink(missing_ok=True)
            expired += path.suffix == ".json"
    return expired


def undo_last(root: Path, *, force: bool = False) -> list[str]:
    """Restore the files of the newest run that changed anything; returns what was done, one line each."""
    root = Path(os.path.realpath(root))
    with RepoLock(root):
        expired = expire(root)
        logs = pending(root)
        if not logs and expired:
            raise UserError(f"nothing to undo in {root}: the undo journal of the last run that changed files there "
                            f"was over {STATE_MAX_AGE / 86400:g} days old and has expired")
        if not logs:
            raise UserError(f"nothing to undo in {root}: no ph run changed a file there")
        log = logs[0]
        record = _load(log, root)
        plan, changed = [], []
        for rel, entry in sorted(record["files"].items()):
            target = _checked_target(root, rel)
            old = None if entry.get("old") is None else base64.b64decode(entry["old"])
            current = target.read_bytes() if target.is_file() else None
            allowed = set(entry.get("wrote", [])) | {_digest(old) if old is not None else None}
            if (_digest(current) if current is not None else None) not in allowed:
                changed.append(rel)
            plan.append((rel, target, old, entry.get("mode")))
        folders = [(rel, _checked_target(root, rel))
                   for rel in sorted(record.get("dirs", []), key=lambda d: str(d).count("/"), reverse=True)]
        if changed and not force:
            raise UserError(f"undo refused: changed since ph's run: {', '.join(changed)}; undo would overwrite "
                            "those changes (ph undo --force to undo anyway)")
        done = []
        for rel, target, old, mode in plan:
            if old is None:
                if target.is_file():
                    target.unlink()
                done.append(f"removed {rel}")
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                _atomic_bytes(target, old, mode)
                done.append(f"restored {rel}")
        for rel, folder in folders:
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
                done.append(f"removed directory {rel}/")
        log.rename(log.with_suffix(".applied"))
        return done


def _load(log: Path, root: Path) -> dict:
    try:
        record = json.loads(log.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise UserError(f"undo journal {log} is unreadable ({err}); nothing was changed") from err
    if not isinstance(record, dict) or record.get("repo") != str(root) or not isinstance(record.get("files"), dict) \
            or not isinstance(record.get("dirs", []), list):
        raise UserError(f"undo journal {log} does not belong to {root}; nothing was changed")
    return record


def _checked_target(root: Path, rel: str) -> Path:
    """The journal entry's path, resolved by the workspace's path policy; no symlink on the way, no escape."""
    from pyharness.workspace.tree import Workspace

    if not isinstance(rel, str):
        raise UserError(f"undo refused: journal entry {rel!r} is not a path; nothing was changed")
    try:
        real = Workspace(root).resolve(rel, write=True)
    except ActionError as err:
        raise UserError(f"undo refused: journal entry {rel}: {err}; nothing was changed") from err
    lexical = Path(os.path.normpath(root / rel))
    if lexical != real or os.path.isabs(rel):
        raise UserError(f"undo refused: journal entry {rel} passes through a symlink or leaves the repo "
                        f"(it resolves to {real}); nothing was changed")
    return lexical


def _atomic_bytes(path: Path, data: bytes, mode: int | None) -> None:
    """Write data to path by temp file + fsync + rename, with the given mode bits."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".ph.tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
