"""Benchmark: the same eval on two checkouts of ph, interleaved task by task, for a change that is code rather than a
configuration (a refactor, a sandbox change), where `ph eval --configs` cannot put both sides in one run.

For each task id, `ph eval SUITE --tasks ID` runs once with each checkout's own `.venv/bin/ph` (the first side
alternates from task to task, so neither always runs on a warmer page cache), each writing its own results folder;
then both folders' records are read and the passes, seconds and differing tasks are printed.

    python benchmarks/checkout_ab.py --before ../old --after . --suite jobs --ids demo_ask,demo_fix,... \
        --out out/ab-jobs -- --model llamacpp:qwen2.5-coder-1.5b --configs harness=on --max-steps 8 --max-seconds 120

Everything after `--` goes to `ph eval` as it is. Resumable: `ph eval` skips the runs a results folder already has.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path


def records(folder: Path) -> dict[tuple[str, str], dict]:
    """The results folder's records by (task, config); the last one wins, as `ph eval`'s report counts them."""
    found: dict[tuple[str, str], dict] = {}
    path = folder / "results.jsonl"
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                record = json.loads(line)
                found[(record["task"], record["config"])] = record
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", type=Path, required=True, help="the checkout before the change")
    parser.add_argument("--after", type=Path, required=True, help="the checkout with the change")
    parser.add_argument("--suite", required=True, help="the suite, as `ph eval` takes it")
    parser.add_argument("--ids", required=True, help="task ids, commas, or @FILE listing them")
    parser.add_argument("--out", type=Path, required=True, help="folder for before/ and after/ results")
    args, rest = parser.parse_known_args()
    rest = rest[1:] if rest[:1] == ["--"] else rest
    ids = (Path(args.ids[1:]).read_text().split() if args.ids.startswith("@")
           else [i for i in args.ids.split(",") if i])
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    for label, checkout in sides.items():
        if not (checkout / ".venv" / "bin" / "ph").is_file():
            print(f"checkout_ab: {checkout} has no .venv/bin/ph; run `make install-dev` there", file=sys.stderr)
            return 2
    for n, task in enumerate(ids):
        order = list(sides.items()) if n % 2 == 0 else list(reversed(sides.items()))
        for label, checkout in order:
            out = (args.out / label).resolve()
            command = [str(checkout / ".venv" / "bin" / "ph"), "eval", args.suite, "--tasks", task, "--out", str(out),
                       *rest]
            print(f"[{n + 1}/{len(ids)}] {task} {label}", flush=True)
            subprocess.run(command, cwd=checkout, stdout=subprocess.DEVNULL, check=False)
    before, after = records(args.out / "before"), records(args.out / "after")
    for label, found in (("before", before), ("after", after)):
        passed = sum(bool(r.get("pass_strict")) for r in found.values())
        seconds = sorted(r.get("seconds", 0.0) for r in found.values())
        median = seconds[len(seconds) // 2] if seconds else 0.0
        print(f"{label:6} {sides[label]}: {passed}/{len(found)} passed, median {median:.1f} s a run")
    differ = sorted(k for k in set(before) | set(after)
                    if bool(before.get(k, {}).get("pass_strict")) != bool(after.get(k, {}).get("pass_strict")))
    for task, config in differ:
        b, a = before.get((task, config), {}), after.get((task, config), {})
        print(f"  differs: {task} {config}: before {b.get('outcome')} ({b.get('reason', '')[:60]}), "
              f"after {a.get('outcome')} ({a.get('reason', '')[:60]})")
    print(f"{len(differ)} task(s) pass on one side only")
    return 0


if __name__ == "__main__":
    sys.exit(main())
