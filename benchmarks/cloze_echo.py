"""Benchmark: what stopping a fill where it writes the code below the hole again saves (`Hole.stops`), and whether it
changes the fills, on the mutant jobs.

For each job, the holes a cloze run would mask near the mutated statement (the statement before it, it, the one after,
and the mutated statement's span and insertion holes) are sampled as the search samples them (greedy, then
SAMPLES - 1 at 0.8, the same seeds), once with the echo stop and once without it (`ECHO_CHARS` set out of reach), the
model's prefix cache emptied before each, which goes first alternating by job. Prints seconds and tokens written per
hole kind, how many holes got exactly the same usable fills both ways, and in how many jobs the mutated statement
was restored (the file parses to the unmutated tree) by any fill.

    python benchmarks/cloze_echo.py --split dev --jobs @evals/mutants/dev15.txt

Needs the embedded model pack and ph's mutant cache (`ph eval mutants --check`). Prints figures; asserts nothing.
"""

import argparse
import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from cloze_window import chosen_jobs, job_holes  # noqa: E402

from pyharness.models.resolve import resolve_model  # noqa: E402
from pyharness.trials import cloze  # noqa: E402
from pyharness.trials import holes as masks  # noqa: E402
from pyharness.trials.wideholes import wide_regions  # noqa: E402

OFF = 10 ** 9
"""ECHO_CHARS that no line reaches: the echo stop off."""


def with_wide(found: list[masks.Hole], line: int) -> list[masks.Hole]:
    """The line holes and, for the mutated statement's, its span and insertion holes."""
    out = list(found)
    for hole in found:
        if hole.start <= line <= hole.end:
            for region in wide_regions("".join(hole.lines), hole.start, hole.end, masks.MAX_SPAN):
                first = hole.lines[region.start - 1]
                out.append(masks.Hole(hole.path, region.start, region.end, hole.rank, hole.lines,
                                      first[:len(first) - len(first.lstrip())], kind=region.kind))
    return out


def sample(model, found: list[masks.Hole], original: str, echo: int) -> list[dict]:
    masks.ECHO_CHARS = echo
    model._load().reset()
    temperatures = [0.0] + [0.8] * (cloze.SAMPLES - 1)
    rows = []
    for hole in found:
        fills = cloze.sample_hole(model, hole, temperatures, seed=100)
        rows.append({"kind": hole.kind, "seconds": sum(f.seconds for f in fills),
                     "written": sum(f.completion_tokens for f in fills),
                     "files": sorted({f.file for f in fills if f.file is not None}),
                     "restored": any(f.file is not None and ast.dump(ast.parse(f.file)) == original for f in fills)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    parser.add_argument("--jobs", default="*", help="glob on job ids, or @FILE of ids (one a line, # comments)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    args = parser.parse_args()
    jobs = chosen_jobs(args.split, args.jobs)
    model = resolve_model(args.model)
    modes = {"echo stop": masks.ECHO_CHARS, "no echo stop": OFF}
    results: dict[str, list[list[dict]]] = {name: [] for name in modes}
    done = 0
    for job in jobs:
        if args.limit is not None and done >= args.limit:
            break
        made = job_holes(job)
        if made is None:
            continue
        found, original = made
        found = with_wide(found, job.line)
        for name in (list(modes) if done % 2 == 0 else list(modes)[::-1]):
            results[name].append(sample(model, found, original, modes[name]))
            rows = results[name][-1]
            print(f"{job.id} {name}: " + ", ".join(f"{r['kind']} {r['seconds']:.1f} s/{r['written']} tok"
                                                   for r in rows), file=sys.stderr, flush=True)
        done += 1
    print(f"{done} jobs of {args.split} ({args.jobs}), {cloze.SAMPLES} samples a hole, model {args.model}")
    print("| fills | line holes s / tokens written | span s / tokens | insert s / tokens | all holes s | "
          "mutated restored (any fill) |")
    print("|---|---|---|---|---|---|")
    for name, runs in results.items():
        cells = []
        for kind in ("line", "span", "insert"):
            rows = [r for job in runs for r in job if r["kind"] == kind]
            cells.append(f"{sum(r['seconds'] for r in rows):.0f} / {sum(r['written'] for r in rows)}" if rows else "–")
        total = sum(r["seconds"] for job in runs for r in job)
        print(f"| {name} | {' | '.join(cells)} | {total:.0f} | {sum(any(r['restored'] for r in j) for j in runs)}/"
              f"{len(runs)} |")
    pairs = [(a, b) for ja, jb in zip(*results.values()) for a, b in zip(ja, jb)]
    print(f"holes with the same usable fills both ways: {sum(a['files'] == b['files'] for a, b in pairs)}/{len(pairs)}")


if __name__ == "__main__":
    main()
