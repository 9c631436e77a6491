"""Undo: before a run first changes a file, its pre-run bytes are saved; `ph undo` puts them back exactly.

Only files the run touched are saved (the user's other uncommitted work is never involved), and
nothing touches git: no commit, no index, no hooks. A file the run created is deleted on undo.
"""

import base64
import json
import os
from pathlib import Path

from pyharness.errors import UserError


class UndoLog:
    """The pre-run content of every file one run changed, stored in `.ph/undo/RUN.json`."""

    def __init__(self, root: Path, run_id: str):
        self.root = Path(root)
        self.path = self.root / ".ph" / "undo" / f"{run_id}.json"
        self.saved: dict[str, str | None] = {}

    def save(self, rel: str, old: bytes | None) -> None:
        """Remember a file's content before its first change in this run (None: it did not exist)."""
        if rel in self.saved:
            return
        self.saved[rel] = None if old is None else base64.b64encode(old).decode("ascii")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"files": self.saved}, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)


def pending(root: Path) -> list[Path]:
    """Undo logs not applied yet, newest first."""
    return sorted((Path(root) / ".ph" / "undo").glob("*.json"), reverse=True)


def undo_last(root: Path) -> list[str]:
    """Restore the files of the newest run that changed anything; returns what was restored."""
    logs = pending(root)
    if not logs:
        raise UserError(f"nothing to undo in {root}: no ph run changed a file there")
    log = logs[0]
    files = json.loads(log.read_text(encoding="utf-8"))["files"]
    restored = []
    for rel, data in sorted(files.items()):
        target = Path(root) / rel
        if data is None:
            target.unlink(missing_ok=True)
            restored.append(f"removed {rel}")
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(data))
            restored.append(f"restored {rel}")
    log.rename(log.with_suffix(".applied"))
    return restored
