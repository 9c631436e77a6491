"""Benchmark: harness time per reply (parse -> repair -> validate -> choose), on the recorded corpus.

Prints the median and 95th percentile, and compares them with the model's own time per step in
the recorded embedded-model transcripts. Prints figures; asserts nothing.
"""

import json
import statistics
import time
from pathlib import Path

from pyharness.actions import CORE
from pyharness.errors import FormatError
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.loop.jobs import MODE_ACTIONS

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 20


def replies() -> list[tuple[str, str]]:
    """(mode, reply) pairs: the malformed-reply corpus plus every recorded embedded-model reply."""
    found = []
    corpus = ROOT / "tests" / "data" / "corpus.jsonl"
    if corpus.exists():
        for line in corpus.read_text(encoding="utf-8").splitlines():
            if line.strip():
                case = json.loads(line)
                found.append((case.get("mode", "fix"), case["reply"]))
    for path in sorted((ROOT / "tests" / "data" / "recorded").glob("*.jsonl")):
        mode = path.stem.split("-")[-1]
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("event") == "turn":
                found.append((mode if mode in MODE_ACTIONS else "fix", record["reply"]))
    return found


def model_seconds_per_step() -> list[float]:
    """Seconds the model took per turn in the recorded transcripts."""
    out = []
    for path in sorted((ROOT / "tests" / "data" / "recorded").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if record.get("event") == "turn" and record.get("seconds"):
                out.append(record["seconds"])
    return out


def main() -> None:
    cases = replies()
    pipelines = {mode: Pipeline({n: CORE[n] for n in names}, HarnessConfig(), default_write_path="main.py")
                 for mode, names in MODE_ACTIONS.items()}
    times = []
    for _ in range(REPEATS):
        for mode, reply in cases:
            pipeline = pipelines.get(mode, pipelines["fix"])
            started = time.perf_counter()
            try:
                pipeline.process_all(reply)
            except FormatError:
                pass
            pipeline.pending_write = None
            times.append(time.perf_counter() - started)
    times.sort()
    median, p95 = statistics.median(times) * 1000, times[int(len(times) * 0.95)] * 1000
    model = model_seconds_per_step()
    print(f"harness per reply: median {median:.3f} ms, p95 {p95:.3f} ms, max {times[-1] * 1000:.2f} ms "
          f"over {len(cases)} replies x {REPEATS} (target: median < 2 ms)")
    if model:
        step = statistics.median(model)
        print(f"model per step (recorded, embedded 1.5B): median {step:.2f} s -> harness = "
              f"{median / 1000 / step * 100:.4f}% of a step (target < 1%)")


if __name__ == "__main__":
    main()
