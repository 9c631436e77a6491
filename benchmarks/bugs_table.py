"""The README's real-bugs table from a `make eval-bugs` results.jsonl: each configuration over all jobs, over the
one-line fixes and over the multi-line/multi-hunk ones (the manifest's `multi`: more than one line on either side,
or more than one hunk), with 95% CIs; then by project; then the passes, budget stops and runs left worse.

    python benchmarks/bugs_table.py evals/results/bugs-test/results.jsonl
"""

import sys
from collections import Counter
from pathlib import Path

from mutants_table import CONFIGS, print_projects, row, seconds_per_candidate, trials

from pyharness.evals.bugs import read_manifest
from pyharness.evals.report import latest, read_results, summarise


def main(path: str) -> None:
    records, problems = read_results(Path(path))
    runs = latest(records)
    multi = {job.id: job.multi for job in read_manifest()[1]}
    unknown = sorted({r["task"] for r in runs} - set(multi))
    if unknown:
        raise SystemExit(f"not in evals/bugs/jobs.json: {', '.join(unknown[:5])}")
    jobs = {r["task"] for r in runs}
    unreadable = f"; {len(problems)} unreadable lines" if problems else ""
    print(f"{len(runs)} runs, {len(jobs)} jobs ({sum(multi[j] for j in jobs)} multi-line/hunk){unreadable}")
    print("\n| config | subset | pass@1 (strict) | 95% CI | first try | gained | tokens/run | seconds/run | "
          "s/solved (median) | s/candidate (median) | errors |\n|---|" + "---|" * 10)
    subsets = {"all jobs": lambda r: True, "one-line fixes": lambda r: not multi[r["task"]],
               "multi-line/hunk fixes": lambda r: multi[r["task"]]}
    for subset, chosen in subsets.items():
        mine = [r for r in runs if chosen(r)]
        summaries = {s.config: s for s in summarise(mine)}
        for config, name in CONFIGS.items():
            if config in summaries:
                print(row(name, subset, summaries[config],
                          seconds_per_candidate([r for r in mine if r["config"] == config])))
    print_projects(runs)
    for r in runs:
        if r["pass_strict"]:
            kind = "multi-line" if multi[r["task"]] else "one-line"
            print(f"pass: {CONFIGS[r['config']]} {r['task']} ({kind}; candidate {trials(r).get('passed_by') or '-'}, "
                  f"{r['seconds']:.0f} s)")
    for config, name in CONFIGS.items():
        mine = [r for r in runs if r["config"] == config]
        reasons = Counter((r.get("reason") or "")[:45] for r in mine).most_common(3)
        left = [r["left"] for r in mine if r.get("left")]
        changed = [x for x in left if x.get("changed")]
        print(f"{name}: {sum(bool(r.get('timed_out')) for r in mine)} of {len(mine)} hit the time budget; "
              f"{sum(r['wall_seconds'] for r in mine) / 3600:.1f} h of runs; {len(changed)} changed files, "
              f"{sum(x['worse'] for x in left)} of {len(left)} left worse than the seed; reasons {reasons}")


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main(sys.argv[1] if len(sys.argv) > 1 else "evals/results/bugs-test/results.jsonl")
