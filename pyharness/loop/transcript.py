"""Every run is written to a JSONL transcript under `.ph/runs/` in the target repo.

Transcripts are private: secrets are redacted before a record reaches disk (`redact.py`), files are created 0600 in
0700 directories, never through a symlink (a repo that ships `.ph` as a link out of the tree is refused), and in a
git repo `.ph/` is added to `.git/info/exclude` so a transcript is never committed by accident.
"""

import json
import os
import stat
import time
from datetime import UTC, datetime
from pathlib import Path

from pyharness.errors import UserError
from pyharness.workspace.redact import redact_data


def runs_dir(repo: Path, *, create: bool = False) -> Path:
    """REPO/.ph/runs, made (0700) on request; a UserError if .ph or runs is anything but a real directory."""
    path = Path(repo)
    for name in (".ph", "runs"):
        path = path / name
        if create:
            try:
                path.mkdir(mode=0o700)
            except FileExistsError:
                pass
        try:
            st = os.lstat(path)
        except FileNotFoundError:
            if create:
                raise
            return path
        if not stat.S_ISDIR(st.st_mode):
            raise UserError(f"{path} is not a directory (a symlink?); ph keeps its transcripts there and will not "
                            "follow it out of the repo: remove it")
    return path


class Transcript:
    """Append-only JSONL log of one run: prompts, raw replies, parsed actions, observations, tokens, timings."""

    def __init__(self, repo: Path, mode: str):
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
        self.path = runs_dir(repo, create=True) / f"{stamp}-{mode}.jsonl"
        from pyharness.workspace.gitops import exclude

        exclude(Path(repo), ".ph/")
        self._started = time.monotonic()

    def turn(self, step: int, new_messages: list[dict], reply, **fields) -> None:
        """One turn record: the messages the turn added, the raw reply with its timing and token counts, then `fields`
        (action, interventions, observation, ok, ...): the one shape `ph show` reads for loop and trial turns."""
        self.write("turn", step=step, new_messages=new_messages, reply=reply.text, finish_reason=reply.finish_reason,
                   stopped_early=reply.stopped_early, seconds=round(reply.seconds, 3),
                   prompt_tokens=reply.prompt_tokens, cached_tokens=reply.cached_tokens,
                   completion_tokens=reply.completion_tokens, **fields)

    def write(self, event: str, **data) -> None:
        """Append one record, secrets redacted; flushed at once so a crash keeps what happened so far."""
        record = {"event": event, "t": round(time.monotonic() - self._started, 3), **data}
        record = redact_data(json.loads(json.dumps(record, ensure_ascii=False, default=str)))
        line = (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8", errors="backslashreplace")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            size = os.fstat(fd).st_size
            try:
                left = memoryview(line)
                while left:
                    left = left[os.write(fd, left):]
            except OSError:  # a full disk: no half record is left at the end of the transcript
                os.ftruncate(fd, size)
                raise
        finally:
            os.close(fd)


def read_transcript(path: Path) -> list[dict]:
    """The records of a transcript file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def latest_runs(repo: Path, limit: int = 20) -> list[Path]:
    """The newest transcripts of a repo, newest first (never through a symlink)."""
    folder = runs_dir(repo)
    if not folder.is_dir():
        return []
    runs = sorted((p for p in folder.glob("*.jsonl") if not p.is_symlink()), reverse=True)
    return runs[:limit]
