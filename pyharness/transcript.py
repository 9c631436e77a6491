"""Every run is written to a JSONL transcript under `.ph/runs/` in the target repo."""

import json
import time
from datetime import UTC, datetime
from pathlib import Path


class Transcript:
    """Append-only JSONL log of one run: prompts, raw replies, parsed actions, observations, tokens, timings."""

    def __init__(self, repo: Path, mode: str):
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S-%f")
        self.path = Path(repo) / ".ph" / "runs" / f"{stamp}-{mode}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._started = time.monotonic()

    def write(self, event: str, **data) -> None:
        """Append one record; flushed at once so a crash keeps what happened so far."""
        record = {"event": event, "t": round(time.monotonic() - self._started, 3), **data}
        with self.path.open("a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")


def read_transcript(path: Path) -> list[dict]:
    """The records of a transcript file."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def latest_runs(repo: Path, limit: int = 20) -> list[Path]:
    """The newest transcripts of a repo, newest first."""
    runs = sorted((Path(repo) / ".ph" / "runs").glob("*.jsonl"), reverse=True)
    return runs[:limit]
