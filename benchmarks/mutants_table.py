"""The README's mutants table from a `make eval-mutants` results.jsonl: each configuration over all jobs and over the
large tree, then by project, then the figures the prose around the table quotes (the passes, budget stops, runs that
left more failing tests than the mutant, reasons).

    python benchmarks/mutants_table.py evals/results/mutants-test60/results.jsonl
"""

import statistics
import sys
from collections import Counter
from pathlib import Path

from pyharness.evals.report import LARGE_SUFFIX, ConfigSummary, latest, on_large_tree, read_results, summarise

CONFIGS = {"protocol=oneshot": "protocol=oneshot (model alone)", "protocol=text harness=off": "harness=off",
           "protocol=text harness=on": "harness=on (trials)"}


def row(name: str, subset: str, s: ConfigSummary, per_candidate: float | None) -> str:
    """One table row from `ph eval`'s own summary of a configuration (`pyharness.evals.report.summarise`)."""
    passed = s.first_try + s.gained
    solved = "–" if s.median_solved_seconds is None else f"{s.median_solved_seconds:.1f}"
    candidate = "–" if per_candidate is None else f"{per_candidate:.1f}"
    return (f"| {name} | {subset} | **{passed}/{s.runs} = {100 * passed / s.runs:.0f}%** | "
            f"{100 * s.ci[0]:.0f}%–{100 * s.ci[1]:.0f}% | {s.first_try} | {s.gained} | {s.mean_tokens:,.0f} | "
            f"{s.mean_seconds:.1f} | {solved} | {candidate} | {s.errors} |")


def seconds_per_candidate(runs: list[dict]) -> float | None:
    """Median over runs that checked a candidate of the trials' seconds per candidate checked (asking for it
    included; a cloze fill counts as one); None without trials."""
    each = [trials(r)["seconds"] / trials(r)["run"] for r in runs if trials(r).get("run")]
    return statistics.median(each) if each else None


def print_projects(runs: list[dict]) -> None:
    """The by-project table: jobs, and each configuration's strict passes."""
    print("\n| project | jobs | " + " | ".join(CONFIGS.values()) + " |\n|---|---|" + "---|" * len(CONFIGS))
    for project in sorted({r["project"] for r in runs}):
        mine = [r for r in runs if r["project"] == project]
        cells = [f"{sum(r['pass_strict'] for r in mine if r['config'] == c)}/{sum(r['config'] == c for r in mine)}"
                 for c in CONFIGS]
        print(f"| {project} | {len({r['task'] for r in mine})} | " + " | ".join(cells) + " |")
    print()


def trials(record: dict) -> dict:
    """A record's trials (records written before the trials had their name keep them under `search`)."""
    return record.get("trials") or record.get("search") or {}


def main(path: str) -> None:
    records, problems = read_results(Path(path))
    runs = latest(records)
    unreadable = f"; {len(problems)} unreadable lines" if problems else ""
    print(f"{len(runs)} runs, {len({r['task'] for r in runs})} jobs{unreadable}")
    print("\n| config | subset | pass@1 (strict) | 95% CI | first try | gained | tokens/run | seconds/run | "
          "s/solved (median) | s/candidate (median) | errors |\n|---|" + "---|" * 10)
    summaries = {s.config: s for s in summarise(records)}
    for subset, suffix in (("all jobs", ""), ("large tree", LARGE_SUFFIX)):
        for config, name in CONFIGS.items():
            mine = [r for r in runs if r["config"] == config and (not suffix or on_large_tree(r))]
            print(row(name, subset, summaries[config + suffix], seconds_per_candidate(mine)))
    print_projects(runs)
    for r in runs:
        if r["pass_strict"]:
            by = trials(r).get("passed_by") or "-"
            print(f"pass: {CONFIGS[r['config']]} {r['task']} (candidate {by}, {r['seconds']:.0f} s)")
    for config, name in CONFIGS.items():
        mine = [r for r in runs if r["config"] == config]
        reasons = Counter((r.get("reason") or "")[:45] for r in mine).most_common(3)
        left = [r["left"] for r in mine if r.get("left")]  # records from before 'left' was kept have none
        worse = f"{sum(x['worse'] for x in left)} of {len(left)} left worse than the mutant" if left else \
            "'left worse' not recorded"
        print(f"{name}: {sum(bool(r.get('timed_out')) for r in mine)} of {len(mine)} hit the time budget; "
              f"{sum(r['wall_seconds'] for r in mine) / 3600:.1f} h of runs; {worse}; reasons {reasons}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "evals/results/mutants-test60/results.jsonl")
