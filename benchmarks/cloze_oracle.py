"""Benchmark: can the model fill the right hole of a real bug? Cloze fills at the fix itself, with and without the
failing test beside the hole (the layer `clozetest`), on the bugs suite's one-hunk jobs.

Localisation and the time budget aside, this asks what the fills are worth: each job whose fix is one hunk of at
most MAX_SPAN seeded lines gets the hole a perfect localiser would mask: the seeded lines of the hunk (a `line` hole
when the fix puts one line back for one, a `span` hole when either side has more lines, an `insert` hole above the
next line when the seed only deleted lines). Its fills are sampled as a cloze round samples them (greedy, then
SAMPLES - 1 at 0.8, the same seeds), once with no file before the hole's and once with the failing test there
(`clozetest.failing_test_file`, fed the seeded tree's own traceback), the prefix cache emptied before each, which goes
first alternating by job. Prints per mode: jobs where a fill gives back the fixed file (its AST equals the fixed
release's), jobs where a fill passes the judging tests (`--check`: each distinct usable fill run by the job's python),
usable fills, and seconds.

    python benchmarks/cloze_oracle.py --split dev --check

Needs the embedded model pack and the bugs suite's releases and venvs (fetched on first use). Prints figures; asserts
nothing. Tune on dev only: the test split's projects are not read while tuning.
"""

import argparse
import ast
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyharness.evals.bugs import load_jobs  # noqa: E402
from pyharness.models.resolve import resolve_model  # noqa: E402
from pyharness.trials import cloze  # noqa: E402
from pyharness.trials import holes as masks  # noqa: E402
from pyharness.trials.clozetest import failing_test_file  # noqa: E402
from pyharness.workspace.testrun import run_pytest  # noqa: E402
from pyharness.workspace.tree import Workspace  # noqa: E402

TEST_TIMEOUT = 120.0


def oracle_hole(job, repo: Path) -> masks.Hole | None:
    """The hole at the job's one hunk in the seeded tree at `repo` (None: several hunks, or over MAX_SPAN lines)."""
    if len(job.hunks) != 1:
        return None
    hunk = job.hunks[0]
    seeded, fixed = hunk.old[1] - hunk.old[0], hunk.new[1] - hunk.new[0]
    if seeded > masks.MAX_SPAN:
        return None
    lines = (repo / hunk.file).read_text(encoding="utf-8").splitlines(keepends=True)
    start = hunk.new[0] + 1  # the seed put the old lines where the fixed ones were: 1-based first seeded line
    below = next((line for line in lines[start - 1:] if line.strip()), "")
    if seeded == 0:
        return masks.Hole(hunk.file, start, start - 1, 1, lines, below[:len(below) - len(below.lstrip())],
                          kind="insert")
    first = lines[start - 1]
    kind = "line" if seeded == fixed == 1 else "span"
    return masks.Hole(hunk.file, start, start + seeded - 1, 1, lines, first[:len(first) - len(first.lstrip())],
                      kind=kind)


def sample(model, hole: masks.Hole, files: tuple) -> list[cloze.Fill]:
    model._load().reset()  # nothing cached: both modes pay their whole prompt
    return cloze.sample_hole(model, hole, [0.0] + [0.8] * (cloze.SAMPLES - 1), seed=100, files=files)


def passes(job, repo: Path, path: str, text: str, checked: dict[str, bool]) -> bool:
    """Do the judging tests pass with `text` as `path`? (each distinct text run once)"""
    if text not in checked:
        target = repo / path
        before = target.read_text(encoding="utf-8")
        target.write_text(text, encoding="utf-8")
        try:
            checked[text] = run_pytest(repo, list(job.tests), timeout=TEST_TIMEOUT, python=job.python).green
        finally:
            target.write_text(before, encoding="utf-8")
    return checked[text]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--check", action="store_true", help="also run the judging tests on each distinct fill")
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    args = parser.parse_args()
    model = resolve_model(args.model)
    modes = ("no file before", "failing test before")
    totals = {m: {"restored": 0, "passed": 0, "usable": 0, "fills": 0, "seconds": 0.0} for m in modes}
    done = 0
    for job in load_jobs(args.split):
        if args.limit is not None and done >= args.limit:
            break
        with tempfile.TemporaryDirectory(prefix="ph-oracle-") as tmp:
            repo = job.make_repo(Path(tmp) / "repo")
            hole = oracle_hole(job, repo)
            if hole is None:
                continue
            fixed = ast.dump(ast.parse((job.root / hole.path).read_text(encoding="utf-8")))
            first = run_pytest(repo, list(job.tests), timeout=TEST_TIMEOUT, python=job.python)
            test = failing_test_file(Workspace(repo), job.failing[0], first.first_traceback)
            checked: dict[str, bool] = {}
            order = modes if done % 2 == 0 else modes[::-1]
            cells = []
            for mode in order:
                fills = sample(model, hole, test if mode == modes[1] else ())
                usable = [f for f in fills if f.file is not None]
                restored = any(ast.dump(ast.parse(f.file)) == fixed for f in usable)
                passed = args.check and any(passes(job, repo, hole.path, f.file, checked) for f in usable)
                row = totals[mode]
                row["restored"] += restored
                row["passed"] += passed
                row["usable"] += len(usable)
                row["fills"] += len(fills)
                row["seconds"] += sum(f.seconds for f in fills)
                cells.append(f"{mode}: {len(usable)} usable, restored {restored}, passed {passed}, "
                             f"{sum(f.seconds for f in fills):.0f} s")
            print(f"{job.id} {hole.where} ({hole.kind}): " + "; ".join(cells), file=sys.stderr, flush=True)
            shutil.rmtree(repo, ignore_errors=True)
        done += 1
    print(f"{done} one-hunk jobs of bugs:{args.split} (fix of at most {masks.MAX_SPAN} seeded lines), "
          f"{cloze.SAMPLES} fills a hole at the fix, model {args.model}")
    print("| fills | jobs restored (AST) | jobs passed (judging tests) | usable fills | seconds |")
    print("|---|---|---|---|---|")
    for mode, row in totals.items():
        passed = f"{row['passed']}/{done}" if args.check else "not run"
        print(f"| {mode} | {row['restored']}/{done} | {passed} | {row['usable']}/{row['fills']} | "
              f"{row['seconds']:.0f} |")


if __name__ == "__main__":
    main()
