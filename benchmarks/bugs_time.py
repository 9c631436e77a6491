"""Where the time of harness=on runs on real bugs goes, from an eval's transcripts: when the first hole was asked,
how many holes a run asked, and whether any of them touched the lines the fix changed.

For each `protocol=text harness=on` transcript of a `ph eval bugs` output folder: seconds to the first cloze round,
the number of cloze rounds, the seconds the loop's own turns took, and the rank (1-based, in asking order) of the
first hole within one line of a hunk of the seed (the seeded file's lines, from the manifest's hunks); then totals
for the runs that failed. Reads files only; asserts nothing.

    python benchmarks/bugs_time.py evals/results/bugs-test-79a23d6
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyharness.evals.bugs import read_manifest  # noqa: E402

HOLE = re.compile(r"<cloze: (?P<path>[^:>]+):(?P<ins>\^)?(?P<start>\d+)(?:-(?P<end>\d+))? masked>")


def seeded_spans(job) -> dict[str, list[tuple[int, int]]]:
    """Each seeded file's hunks as [first, last] lines of the seeded file (last = first - 1 for a hunk the seed
    deleted: the fix added lines there). A hunk puts V0's lines[c:d] where V1's lines[a:b] were (0-based slices, as
    `pyharness.evals.bugs.seed` does), so each hunk moves the ones below it in the same file by (d - c) - (b - a)."""
    spans: dict[str, list[tuple[int, int]]] = {}
    by_file: dict[str, list] = {}
    for hunk in job.hunks:
        by_file.setdefault(hunk.file, []).append(hunk)
    for path, hunks in by_file.items():
        shift = 0
        for hunk in sorted(hunks, key=lambda h: h.new[0]):
            (a, b), (c, d) = hunk.new, hunk.old
            first = a + shift + 1
            spans.setdefault(path, []).append((first, first + (d - c) - 1))
            shift += (d - c) - (b - a)
    return spans


def touches(path: str, start: int, end: int, spans: dict[str, list[tuple[int, int]]]) -> bool:
    """Does the hole [start, end] of `path` come within one line of a hunk?"""
    return any(start <= last + 1 and end >= first - 1 for first, last in spans.get(path, []))


def run_row(transcript: Path, spans: dict) -> dict:
    rounds, loop_seconds, first_hit, first_at, end = 0, 0.0, None, None, {}
    last_t = 0.0
    for line in transcript.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        t = record.get("t", last_t)
        if record.get("event") == "turn":
            asked = " ".join(m.get("content", "") for m in record.get("new_messages", []))
            found = HOLE.search(asked)
            if found:
                rounds += 1
                first_at = t if first_at is None else first_at
                start = int(found["start"])
                end_line = int(found["end"] or start)
                if first_hit is None and touches(found["path"], start, end_line, spans):
                    first_hit = rounds
            else:
                loop_seconds += t - last_t
        elif record.get("event") == "end":
            end = record
        last_t = t
    return {"rounds": rounds, "first_at": first_at, "first_hit": first_hit, "loop_seconds": loop_seconds,
            "seconds": end.get("seconds"), "reason": (end.get("reason") or "")[:70]}


def main(folder: str) -> None:
    out = Path(folder)
    jobs = {job.id: job for job in read_manifest()[1]}
    results = {}
    for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("config") == "protocol=text harness=on":
            results[record["task"]] = record
    rows = []
    for task, record in sorted(results.items()):
        found = sorted((out / "transcripts").glob(f"{task}__*harness=on*.jsonl"))
        if not found:
            continue
        job = jobs[task]
        row = run_row(found[-1], seeded_spans(job))
        row.update(task=task, passed=bool(record.get("pass_strict")), multi=job.multi)
        rows.append(row)
    print("| job | multi | passed | first hole at s | holes asked | first hole on the fix | loop turns s | end |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        first = f"{r['first_at']:.0f}" if r["first_at"] is not None else "–"
        print(f"| {r['task']} | {'yes' if r['multi'] else 'no'} | {'yes' if r['passed'] else 'no'} | {first} | "
              f"{r['rounds']} | {r['first_hit'] or '–'} | {r['loop_seconds']:.0f} | {r['reason']} |")
    failed = [r for r in rows if not r["passed"]]
    asked = [r["first_at"] for r in failed if r["first_at"] is not None]
    print(f"\n{len(rows)} harness=on runs, {len(rows) - len(failed)} passed. Of the {len(failed)} that failed: "
          f"{sum(r['first_hit'] is not None for r in failed)} asked a hole within one line of the fix; "
          f"{sum(r['rounds'] == 0 for r in failed)} asked no hole; holes asked per run "
          f"{_median([r['rounds'] for r in failed])} (median); first hole at {_median(asked)} s (median).")


def _median(values: list) -> str:
    if not values:
        return "–"
    ordered = sorted(values)
    mid = len(ordered) // 2
    value = ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2
    return f"{value:.0f}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "evals/results/bugs-test-79a23d6")
