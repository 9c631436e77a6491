"""Benchmark: fix mode's fault localisation on the mutant jobs or the real bugs, no model loaded. For each job, the
seeded tree is prepared as `ph fix` prepares it (the tests run, the first failing test is traced) and the search's
suspect functions are worked out; a job is a hit when one of them holds a line of the bug (so a candidate can change
it). Beside them, the ranked suspect lines (`pyharness.localise.linerank`): a job is a line top-k hit when one of the
first k suspects' spans touches the bug (a checkout without line ranking shows no line figures).

The bug's lines: a mutant's mutated line; a real bug's seeded lines, hunk by hunk (the pre-fix text the seed put back),
and for a hunk whose fix only adds lines, the statements just above and just below the place they go (an insertion
hole above the one below, or a span with the one above, can hold the fix there).

    python benchmarks/localise.py --split dev               # tune here
    python benchmarks/localise.py --split test              # report here
    python benchmarks/localise.py --suite bugs --split dev  # the real bugs (`ph eval bugs`)
    python benchmarks/localise.py --split dev --compare /work/eval-wt   # this checkout against another one

The projects come from ph's caches (`ph eval mutants --check` / `ph eval bugs --check` fetch them); a real bug's tests
run with its project's venv python. Prints figures; asserts nothing.
"""

import argparse
import fnmatch
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bug_regions(job) -> list[tuple[str, int, int]]:
    """(file, first, last) of the lines a fix must change in the seeded tree, 1-based: a mutant's line; a real bug's
    seeded lines per hunk, or for a hunk that only adds lines, the line above and the line below where they go."""
    if not hasattr(job, "hunks"):
        return [(job.file, job.line, job.line)]
    regions, shift = [], {}
    for hunk in sorted(job.hunks, key=lambda h: (h.file, h.new)):
        first = hunk.new[0] + shift.get(hunk.file, 0)  # 0-based start of the hunk's seeded text
        size = hunk.old[1] - hunk.old[0]
        regions.append((hunk.file, first + 1, first + size) if size else (hunk.file, first, first + 1))
        shift[hunk.file] = shift.get(hunk.file, 0) + size - (hunk.new[1] - hunk.new[0])
    return regions


def touches(regions, path: str, start: int, end: int) -> bool:
    return any(path == rel and start <= last and end >= first for rel, first, last in regions)


def measure(split: str, pattern: str, suite: str = "mutants") -> list[dict]:
    """One record per job of the checkout on sys.path: where the suspects are and whether one holds the bug."""
    from pyharness.actions.base import Context
    from pyharness.loop.jobs import Job

    if suite == "bugs":
        from pyharness.evals.bugs import load_jobs
    else:
        from pyharness.evals.mutants import load_jobs
    from pyharness.trials.suspects import suspects
    from pyharness.workspace.tree import Workspace

    try:
        from pyharness.localise.linerank import suspect_lines
    except ImportError:  # a checkout from before line ranking (for --compare): no line figures
        suspect_lines = None
    records = []
    for job in load_jobs(split):
        if not chosen(job.id, pattern):
            continue
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="ph-localise-") as tmp:
            repo = job.make_repo(Path(tmp) / "repo")
            ws = Workspace(repo, protect_tests=True)
            fix = Job("fix", task=job.task, tests=job.tests)
            fix.prepare(ws, Context(workspace=ws, test_timeout=300, **_python(job)))
            try:
                units = (suspects(ws, fix.first_run.first_traceback, fix.trace, fix.failing_before[0])
                         if fix.failing_before else [])
            except TypeError:  # a checkout from before suspects() took the failing test (for --compare)
                units = suspects(ws, fix.first_run.first_traceback, fix.trace) if fix.failing_before else []
            lines = (suspect_lines(ws, fix.trace, fix.first_run.first_traceback)
                     if suspect_lines and fix.failing_before else [])
            fix.cleanup()
        regions = bug_regions(job)
        at = [n for n, u in enumerate(units, 1) if touches(regions, u.path, u.start, u.end)]
        traced = fix.trace.lines if fix.trace else {}
        ran = any(n in traced.get(rel, set()) for rel, first, last in regions for n in range(first, last + 1))
        line_at = [n for n, s in enumerate(lines, 1) if touches(regions, s.path, s.start, s.end)]
        records.append({"job": job.id, "project": job.project, "hit": at[0] if at else 0, "ran": ran,
                        "shown": [f"{u.path}:{u.name}" for u in units],
                        "line_rank": (line_at[0] if line_at else 0) if suspect_lines else None,
                        "lines_shown": [f"{s.path}:{s.start}-{s.end}" for s in lines[:3]],
                        "seconds": round(time.perf_counter() - started, 1)})
        print(json.dumps(records[-1]), file=sys.stderr, flush=True)
    return records


def chosen(job_id: str, pattern: str) -> bool:
    """`pattern` is a glob on job ids, or @FILE listing ids one a line (`#` starts a comment), as `ph eval --tasks`."""
    if pattern.startswith("@"):
        lines = Path(pattern[1:]).read_text(encoding="utf-8").splitlines()
        return job_id in {line.split("#")[0].strip() for line in lines}
    return fnmatch.fnmatch(job_id, pattern)


def _python(job) -> dict:
    """A real bug's tests run with its project's venv python (`Context.python`); a mutant's with this one."""
    python = getattr(job, "python", None)
    return {"python": python} if python else {}


LINE_TOPS = (1, 3, 5, 10)


def summary(records: list[dict]) -> str:
    """One checkout's figures: function-level hits, and line-level top-k hits when it ranks lines."""
    hits = sum(bool(r["hit"]) for r in records)
    first = sum(r["hit"] == 1 for r in records)
    ran = sum(r["ran"] for r in records)
    per = Counter(r["project"] for r in records)
    per_hit = Counter(r["project"] for r in records if r["hit"])
    projects = ", ".join(f"{p} {per_hit[p]}/{n}" for p, n in sorted(per.items()))
    return (f"suspects hold the mutated line: {hits}/{len(records)} (first suspect: {first}); the failing test ran "
            f"that line: {ran}/{len(records)}; by project: {projects}{line_summary(records)}")


def line_summary(records: list[dict]) -> str:
    """Line-level top-1/3/5/10 hit rates ('' when the records have no line ranks: an older checkout)."""
    ranked = [r["line_rank"] for r in records if r.get("line_rank") is not None]
    if not records or len(ranked) < len(records):
        return ""
    tops = ", ".join(f"top-{k} {sum(0 < n <= k for n in ranked)}/{len(ranked)}" for k in LINE_TOPS)
    return f"\n  suspect lines hold the mutated line: {tops} (anywhere: {sum(n > 0 for n in ranked)})"


def line_hit(record: dict, k: int = LINE_TOPS[-1]) -> bool | None:
    """Whether one of the first k suspect lines holds the mutated line; None without line ranks."""
    rank = record.get("line_rank")
    return None if rank is None else 0 < rank <= k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="mutants", choices=("mutants", "bugs"))
    parser.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    parser.add_argument("--jobs", default="*", help="glob on job ids, or @FILE listing them")
    parser.add_argument("--compare", type=Path, help="another checkout of ph, measured the same way")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one checkout's records
    args = parser.parse_args()
    if args.json:
        print(json.dumps(measure(args.split, args.jobs, args.suite)))
        return
    sys.path.insert(0, str(ROOT))
    columns = {"this checkout": measure(args.split, args.jobs, args.suite)}
    if args.compare:
        env = {**os.environ, "PYTHONPATH": str(args.compare.resolve())}
        done = subprocess.run([sys.executable, __file__, "--json", "--suite", args.suite, "--split", args.split,
                               "--jobs", args.jobs],
                              capture_output=True, text=True, env=env, cwd=args.compare, check=False)
        lines = done.stdout.strip().splitlines()
        if not lines:
            print(f"{args.compare}: {done.stderr.strip()[-300:]}")
            return
        columns[str(args.compare)] = json.loads(lines[-1])
    for name, records in columns.items():
        print(f"{name}: {summary(records)}")
    if len(columns) == 2:
        mine, other = columns.values()
        for a, b in zip(mine, other):
            if bool(a["hit"]) != bool(b["hit"]):
                print(f"  {a['job']}: this checkout {a['hit'] or 'miss'}, other {b['hit'] or 'miss'}")
            if None not in (line_hit(a), line_hit(b)) and line_hit(a) != line_hit(b):
                print(f"  {a['job']}: suspect line {a['line_rank'] or 'miss'} here, {b['line_rank'] or 'miss'} other")


if __name__ == "__main__":
    main()
