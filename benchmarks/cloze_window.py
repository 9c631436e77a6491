"""Benchmark: what aligning the cloze window saves, and whether it changes what the model restores, on the mutant jobs.

For each job, three statements are masked one after another as a cloze run masks holes that rank near each other
(the statement before the mutated one, the mutated one, the one after), each sampled as the search samples it
(greedy, then SAMPLES - 1 at 0.8, the same seeds), once with the window above each hole starting CONTEXT_BEFORE lines
up (`WINDOW_ALIGN` 1, the window before alignment) and once aligned; the model's prefix cache is emptied before each,
and which goes first alternates by job. Prints, per hole in the sequence, seconds and prompt tokens read (the first
hole finds nothing cached; the later ones show what the cache saves), and in how many jobs the mutated statement was
restored (the file then parses to the unmutated tree) by the greedy fill and by any fill.

    python benchmarks/cloze_window.py --split dev --jobs 'sympy*' --limit 6
    python benchmarks/cloze_window.py --split dev --jobs @evals/mutants/dev15.txt

Needs the embedded model pack and ph's mutant cache (`ph eval mutants --check`). Prints figures; asserts nothing.
"""

import argparse
import ast
import fnmatch
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pyharness.evals.mutants import load_jobs  # noqa: E402
from pyharness.evals.mutate import mutate  # noqa: E402
from pyharness.localise.linerank import spans_of  # noqa: E402
from pyharness.models.resolve import resolve_model  # noqa: E402
from pyharness.trials import cloze  # noqa: E402
from pyharness.trials import holes as masks  # noqa: E402


def job_holes(job) -> tuple[list[masks.Hole], str] | None:
    """The three holes of one job (before, mutated, after) and the unmutated file's tree dump; None when the mutated
    line is no maskable statement."""
    original = (job.root / job.file).read_text(encoding="utf-8")
    mutated = mutate(original, job.site)
    spans = spans_of(mutated)
    if job.line not in spans:
        return None
    order = sorted(set(spans.values()))
    at = order.index(spans[job.line])
    picks = order[max(0, at - 1):at + 2]
    lines = mutated.splitlines(keepends=True)
    holes = []
    for start, end in picks:
        first = lines[start - 1]
        holes.append(masks.Hole(job.file, start, end, len(holes) + 1, lines, first[:len(first) - len(first.lstrip())]))
    return holes, ast.dump(ast.parse(original))


def sequence(model, holes: list[masks.Hole], original: str, align: int, mutated_line: int) -> list[dict]:
    """Sample each hole in turn with the window aligned to `align` lines, from an empty prefix cache."""
    masks.WINDOW_ALIGN = align
    model._load().reset()  # nothing cached: the first hole pays its whole prompt
    rows = []
    temperatures = [0.0] + [0.8] * (cloze.SAMPLES - 1)
    for hole in holes:
        fills = cloze.sample_hole(model, hole, temperatures, seed=100)
        restored = [f.file is not None and ast.dump(ast.parse(f.file)) == original for f in fills]
        rows.append({"seconds": sum(f.seconds for f in fills),
                     "read": sum(f.prompt_tokens - f.cached_tokens for f in fills),
                     "first_read": fills[0].prompt_tokens - fills[0].cached_tokens,
                     "mutated": hole.start <= mutated_line <= hole.end,
                     "greedy": restored[0], "any": any(restored)})
    return rows


def restored(row: dict) -> str:
    """How the mutated hole came back ('' for the other holes)."""
    if not row["mutated"]:
        return ""
    return " (mutated: " + ("greedy" if row["greedy"] else "any" if row["any"] else "not") + " restored)"


def chosen_jobs(split: str, pattern: str) -> list:
    """The mutant jobs of `split` whose ids match `pattern`: a glob, or @FILE of ids (one a line, # comments)."""
    if pattern.startswith("@"):
        wanted = {line.split("#")[0].strip() for line in Path(pattern[1:]).read_text().splitlines()} - {""}
        return [j for j in load_jobs(split) if j.id in wanted]
    return [j for j in load_jobs(split) if fnmatch.fnmatch(j.id, pattern)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", default="dev", choices=("dev", "test", "all"))
    parser.add_argument("--jobs", default="*", help="glob on job ids, or @FILE of ids (one a line, # comments)")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--align", type=int, default=masks.WINDOW_ALIGN, help="the aligned mode's WINDOW_ALIGN")
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    args = parser.parse_args()
    jobs = chosen_jobs(args.split, args.jobs)
    model = resolve_model(args.model)
    modes = {"unaligned": 1, f"aligned {args.align}": args.align}
    results: dict[str, list[list[dict]]] = {name: [] for name in modes}
    done = 0
    for job in jobs:
        if args.limit is not None and done >= args.limit:
            break
        made = job_holes(job)
        if made is None:
            print(f"{job.id}: the mutated line is no maskable statement; skipped", file=sys.stderr)
            continue
        holes, original = made
        names = list(modes) if done % 2 == 0 else list(modes)[::-1]
        for name in names:
            rows = sequence(model, holes, original, modes[name], job.line)
            results[name].append(rows)
            print(f"{job.id} {name}: " + ", ".join(f"{r['seconds']:.1f} s/{r['read']} read{restored(r)}" for r in rows),
                  file=sys.stderr, flush=True)
        done += 1
    print(f"{done} jobs of {args.split} ({args.jobs}), {cloze.SAMPLES} samples a hole, model {args.model}")
    print("| window | hole 1 s | hole 2 s | hole 3 s | tokens read, hole 1 / 2 / 3 | sequence s | "
          "mutated restored: greedy | any sample |")
    print("|---|---|---|---|---|---|---|---|")
    for name, runs in results.items():
        if not runs:
            continue
        count = len(runs)
        per = [[r[k] for r in runs if k < len(r)] for k in range(3)]
        secs = " | ".join(f"{sum(r['seconds'] for r in p) / len(p):.1f}" if p else "–" for p in per)
        read = " / ".join(f"{sum(r['read'] for r in p) / len(p):.0f}" if p else "–" for p in per)
        total = sum(r["seconds"] for rows in runs for r in rows) / count
        greedy = sum(any(r["mutated"] and r["greedy"] for r in rows) for rows in runs)
        anyone = sum(any(r["mutated"] and r["any"] for r in rows) for rows in runs)
        print(f"| {name} | {secs} | {read} | {total:.1f} | {greedy}/{count} | {anyone}/{count} |")


if __name__ == "__main__":
    main()
