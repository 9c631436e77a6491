"""The README's mutants table from a `make eval-mutants` results.jsonl: each configuration over all jobs and over the
large tree, then by project, then the figures the prose around the table quotes (the passes, budget stops, reasons).

    python benchmarks/mutants_table.py evals/results/mutants-test60/results.jsonl
"""

import statistics
import sys
from collections import Counter
from pathlib import Path

from pyharness.evalreport import latest, read_results, wilson

CONFIGS = {"protocol=oneshot": "protocol=oneshot (model alone)", "protocol=text harness=off": "harness=off",
           "protocol=text harness=on": "harness=on (search)"}


def row(name: str, subset: str, runs: list[dict]) -> str:
    passed = [r for r in runs if r["pass_strict"]]
    low, high = wilson(len(passed), len(runs))
    first = sum(bool(r.get("first_try")) for r in passed)
    tokens = statistics.mean(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0) for r in runs)
    solved = f"{statistics.median(r['seconds'] for r in passed):.1f}" if passed else "–"
    errors = sum(r.get("outcome") == "error" for r in runs)
    return (f"| {name} | {subset} | **{len(passed)}/{len(runs)} = {100 * len(passed) / len(runs):.0f}%** | "
            f"{100 * low:.0f}%–{100 * high:.0f}% | {first} | {len(passed) - first} | {tokens:,.0f} | "
            f"{statistics.mean(r['wall_seconds'] for r in runs):.1f} | {solved} | {errors} |")


def main(path: str) -> None:
    records, problems = read_results(Path(path))
    runs = latest(records)
    unreadable = f"; {len(problems)} unreadable lines" if problems else ""
    print(f"{len(runs)} runs, {len({r['task'] for r in runs})} jobs{unreadable}")
    print("\n| config | subset | pass@1 (strict) | 95% CI | first try | gained | tokens/run | seconds/run | "
          "s/solved (median) | errors |\n|---|" + "---|" * 9)
    for subset, keep in (("all jobs", lambda r: True), ("large tree", lambda r: bool(r.get("large")))):
        for config, name in CONFIGS.items():
            print(row(name, subset, [r for r in runs if r["config"] == config and keep(r)]))
    print("\n| project | jobs | " + " | ".join(CONFIGS.values()) + " |\n|---|---|" + "---|" * len(CONFIGS))
    for project in sorted({r["project"] for r in runs}):
        mine = [r for r in runs if r["project"] == project]
        cells = [f"{sum(r['pass_strict'] for r in mine if r['config'] == c)}/{sum(r['config'] == c for r in mine)}"
                 for c in CONFIGS]
        print(f"| {project} | {len({r['task'] for r in mine})} | " + " | ".join(cells) + " |")
    print()
    for r in runs:
        if r["pass_strict"]:
            by = (r.get("search") or {}).get("passed_by") or "-"
            print(f"pass: {CONFIGS[r['config']]} {r['task']} (candidate {by}, {r['seconds']:.0f} s)")
    for config, name in CONFIGS.items():
        mine = [r for r in runs if r["config"] == config]
        reasons = Counter((r.get("reason") or "")[:45] for r in mine).most_common(3)
        print(f"{name}: {sum(bool(r.get('timed_out')) for r in mine)} of {len(mine)} hit the time budget; "
              f"{sum(r['wall_seconds'] for r in mine) / 3600:.1f} h of runs; reasons {reasons}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "evals/results/mutants-test60/results.jsonl")
