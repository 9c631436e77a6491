"""Benchmark: what the failfirst layer saves per fix candidate, no model loaded. For each mutant job the tree is
prepared as `ph fix` prepares it; then one candidate that fixes nothing (the mutated file as it is, plus a blank
line, so it is a change) is checked in a scratch copy the way the search checks it, with the layer and without,
alternating, `--repeat` times each. Prints the median seconds per check by project, and asserts nothing.

    python benchmarks/failfirst.py --split dev --per-project 3

The projects come from ph's mutant cache (`ph eval mutants --check` fetches them).
"""

import argparse
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def measure(split: str, per_project: int, repeat: int) -> dict[str, dict[bool, list[float]]]:
    from pyharness.actions.base import Context
    from pyharness.evals.mutants import load_jobs
    from pyharness.loop.jobs import Job
    from pyharness.trials.verdicts import UNMEASURED, check_in_scratch
    from pyharness.workspace.tree import Workspace

    seconds: dict[str, dict[bool, list[float]]] = defaultdict(lambda: {True: [], False: []})
    taken: dict[str, int] = defaultdict(int)
    for job in load_jobs(split):
        if taken[job.project] >= per_project:
            continue
        taken[job.project] += 1
        with tempfile.TemporaryDirectory(prefix="ph-failfirst-") as tmp:
            repo = job.make_repo(Path(tmp) / "repo")
            ws = Workspace(repo, protect_tests=True)
            ctx = Context(workspace=ws, test_timeout=300, spectrum=False)
            fix = Job("fix", task=job.task, tests=job.tests)
            fix.prepare(ws, ctx)
            files = {job.file: (repo / job.file).read_text(encoding="utf-8") + "\n"}
            for _ in range(repeat):
                for on in (True, False):
                    ctx.fail_first = on
                    started = time.perf_counter()
                    verdict = check_in_scratch(ws, fix, ctx, [], files)
                    seconds[job.project][on].append(time.perf_counter() - started)
                    assert not verdict.green and (verdict.passed == UNMEASURED) == on, (job.id, verdict)
            fix.cleanup()
        print(f"{job.id}: with {seconds[job.project][True][-1]:.1f} s, without {seconds[job.project][False][-1]:.1f} s",
              file=sys.stderr, flush=True)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    parser.add_argument("--per-project", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    for project, by in sorted(measure(args.split, args.per_project, args.repeat).items()):
        on, off = statistics.median(by[True]), statistics.median(by[False])
        print(f"{project}: a candidate that fixes nothing costs {on:.1f} s with failfirst, {off:.1f} s without "
              f"(median of {len(by[True])} checks each; {off / on:.1f}x)")


if __name__ == "__main__":
    main()
