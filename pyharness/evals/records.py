"""The one writer of an eval's results: each finished run's record is appended to OUT/results.jsonl and its transcript
kept under OUT/transcripts/. The plain runner's threads and the Ray driver both hand their runs' output here, so a
run's record and transcript look the same wherever the run went."""

import json
import re
import threading
from dataclasses import dataclass
from pathlib import Path


@dataclass
class RunOutput:
    """What one run hands back: its record (`transcript` still '') and its transcript's bytes (b'' when none)."""

    record: dict
    transcript: bytes = b""


class ResultsFile:
    """OUT/results.jsonl and OUT/transcripts/, written by one object only (threads share it under its lock)."""

    def __init__(self, out: Path):
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        (out / "transcripts").mkdir(exist_ok=True)
        self.path = out / "results.jsonl"
        self._lock = threading.Lock()

    def add(self, output: RunOutput) -> dict:
        """Keep the transcript, then append the record (one whole line: a kill cuts at most this line)."""
        record = dict(output.record)
        with self._lock:
            record["transcript"] = ""
            if output.transcript:
                dest = self.out / "transcripts" / f"{transcript_name(record)}.jsonl"
                dest.write_bytes(output.transcript)
                record["transcript"] = dest.relative_to(self.out).as_posix()
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(record, ensure_ascii=False) + "\n")
        return record


def transcript_name(record: dict) -> str:
    """The file name (without .jsonl) of a run's kept transcript: its task, model, configuration and repeat."""
    name = f"{record['task']}__{record['model']}__{record['config']}__r{record['repeat']}"
    return re.sub(r"[^A-Za-z0-9.=_-]+", "_", name)
