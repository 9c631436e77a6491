"""Benchmark: ph on a large tree (a sympy mutant job, 1,500+ Python files): the size of the fix context and of
list/search, and what one step's state hash costs. Builds the prompt only; no model is loaded.

    python benchmarks/large_tree.py                      # this checkout
    python benchmarks/large_tree.py --compare /work/main # this checkout against another one (e.g. before a change)

sympy comes from ph's mutant cache (`ph eval mutants --check` fetches it); without it the script says so and stops.
Tokens are estimated as characters / 4. Prints figures; asserts nothing.
"""

import argparse
import builtins
import io
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FIGURES = (
    ("first message, est. tokens", "message_tokens"),
    ("system prompt, est. tokens", "system_tokens"),
    ("files shown in the map", "map_files"),
    ("mutated file's place in the map", "suspect_rank"),
    ("preparing the fix context, s", "prepare_seconds"),
    ("state hash (warm), s", "hash_seconds"),
    ("state hash (warm), files opened", "hash_opens"),
    ("list '.', est. tokens", "list_tokens"),
    ("search 'def ', est. tokens", "search_tokens"),
    ("search 'def ', s", "search_seconds"),
    ("search 'def ', files opened", "search_opens"),
)


REAL_OPEN = io.open


def opens() -> list[str]:
    """Start counting file opens (builtins.open and io.open, which pathlib uses); returns the growing list."""
    seen: list[str] = []

    def counting(file, *args, **kwargs):
        seen.append(str(file))
        return REAL_OPEN(file, *args, **kwargs)

    builtins.open = io.open = counting
    return seen


def measure(job_id: str | None) -> dict:
    """The figures of the checkout on sys.path, on one sympy mutant job."""
    from pyharness.actions import CORE
    from pyharness.actions.base import Context
    from pyharness.evals.mutants import MutantJob
    from pyharness.evals.projects import PROJECTS, cache_root
    from pyharness.loop.jobs import Job
    from pyharness.loop.prompts import system_prompt
    from pyharness.workspace.tree import Workspace

    source = cache_root() / PROJECTS["sympy"].key
    if not (source / ".ph-verified").is_file():
        return {"error": f"sympy is not in ph's cache ({source}); run `ph eval mutants --check` once to fetch it"}
    records = json.loads((ROOT / "evals" / "mutants" / "jobs.json").read_text(encoding="utf-8"))["jobs"]
    record = next(r for r in records if r["project"] == "sympy" and (job_id is None or r["id"] == job_id))
    job = MutantJob(**record)
    job.root = source
    with tempfile.TemporaryDirectory(prefix="ph-large-") as tmp:
        repo = job.make_repo(Path(tmp) / "repo")
        ws = Workspace(repo, protect_tests=True)
        ctx = Context(workspace=ws, test_timeout=300)
        fix = Job("fix", task=job.task, tests=job.tests)
        started = time.perf_counter()
        message = fix.prepare(ws, ctx)
        prepare = time.perf_counter() - started
        shown = message.split("Repository files:\n", 1)[-1].split("\n\n", 1)[0].splitlines()
        files = [line.split(":", 1)[0] for line in shown if not line.startswith("...")]
        system = system_prompt("fix", {name: CORE[name] for name in fix.actions})
        ws.state_hash()
        seen = opens()
        started = time.perf_counter()
        ws.state_hash()
        hashed = time.perf_counter() - started
        hash_opens = len([p for p in seen if p.startswith(str(repo))])
        listing = CORE["list"].run(CORE["list"].args(path="."), ctx).text
        seen.clear()
        started = time.perf_counter()
        found = CORE["search"].run(CORE["search"].args(pattern="def "), ctx).text
        searched = time.perf_counter() - started
        builtins.open = io.open = REAL_OPEN
        return {"job": job.id, "files": len(ws.files()), "message_tokens": len(message) // 4,
                "system_tokens": len(system) // 4, "map_files": len(files),
                "suspect_rank": files.index(job.file) + 1 if job.file in files else "not shown",
                "prepare_seconds": round(prepare, 1), "hash_seconds": round(hashed, 3), "hash_opens": hash_opens,
                "list_tokens": len(listing) // 4, "search_tokens": len(found) // 4,
                "search_seconds": round(searched, 2),
                "search_opens": len({p for p in seen if p.startswith(str(repo))})}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", type=Path, help="another checkout of ph, measured the same way")
    parser.add_argument("--job", help="a sympy job id of evals/mutants/jobs.json (default: the first)")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)  # one checkout's figures, for --compare
    args = parser.parse_args()
    if not args.json:  # this checkout's code, not an installed copy (--json runs under the other one's PYTHONPATH)
        sys.path.insert(0, str(ROOT))
    if args.json:
        print(json.dumps(measure(args.job)))
        return
    columns = {"this checkout": measure(args.job)}
    if args.compare:
        env = {**os.environ, "PYTHONPATH": str(args.compare.resolve())}
        done = subprocess.run([sys.executable, __file__, "--json", *(["--job", args.job] if args.job else [])],
                              capture_output=True, text=True, env=env, cwd=args.compare, check=False)
        lines = done.stdout.strip().splitlines()
        columns[str(args.compare)] = json.loads(lines[-1]) if lines else {"error": done.stderr.strip()[-300:]}
    for name, figures in columns.items():
        if "error" in figures:
            print(f"{name}: {figures['error']}")
            return
    first = next(iter(columns.values()))
    print(f"sympy mutant {first['job']} ({first['files']} files listed); tokens are characters / 4")
    print(f"{'':36}" + "".join(f"{name:>22}" for name in columns))
    for label, key in FIGURES:
        print(f"{label:36}" + "".join(f"{str(figures.get(key, '-')):>22}" for figures in columns.values()))


if __name__ == "__main__":
    main()
