"""Benchmark: what the sandbox costs per test run, no model loaded. The same `run_pytest` (as fix mode runs it) on the
demo repo's whole suite and on one test file of a real project (toolz's tests/test_itertoolz.py, from ph's mutant
cache, fetched on first use), with and without the sandbox, alternating, `--repeat` times each. Prints the median and
the spread of seconds per run and the difference of the medians; asserts nothing.

With `--against DIR` (another checkout of ph, e.g. `git archive main | tar -x -C DIR`), each run alternates between
this checkout's code and DIR's, on the same repos in the same process order, and the two are printed side by side:
a before/after measured in one run.

    python benchmarks/sandbox_cost.py --repeat 20
    python benchmarks/sandbox_cost.py --repeat 20 --against /tmp/ph-main
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKER = """
import json, sys, time
from pathlib import Path
from pyharness.workspace import sandbox
from pyharness.workspace.testrun import run_pytest
print(json.dumps({"code": str(Path(sandbox.__file__).parents[2]), "sandbox": sandbox.describe()}), flush=True)
for line in sys.stdin:
    repo, tests, on = json.loads(line)
    with sandbox.override(on):
        started = time.perf_counter()
        run = run_pytest(Path(repo), tests, timeout=300)
        took = time.perf_counter() - started
    print(json.dumps({"seconds": took, "outcome": run.outcome, "summary": run.summary()}), flush=True)
"""
"""A process that imports one checkout's pyharness and times the runs it is sent (one JSON line each)."""


class Worker:
    """One checkout's code in its own process."""

    def __init__(self, checkout: Path) -> None:
        env = {**os.environ, "PYTHONPATH": str(checkout)}
        self.proc = subprocess.Popen([sys.executable, "-c", WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, env=env, cwd=checkout)
        hello = json.loads(self.proc.stdout.readline())
        if Path(hello["code"]).resolve() != checkout.resolve():
            raise SystemExit(f"{checkout}: the worker imported pyharness from {hello['code']}")
        self.checkout, self.sandbox = checkout, hello["sandbox"]

    def run(self, repo: Path, tests: list[str], on: bool) -> float:
        self.proc.stdin.write(json.dumps([str(repo), tests, on]) + "\n")
        self.proc.stdin.flush()
        done = json.loads(self.proc.stdout.readline())
        if done["outcome"] not in ("passed", "failed"):
            raise SystemExit(f"{self.checkout} on {repo.name}: the run ended {done['outcome']}: {done['summary']}")
        return done["seconds"]

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(30)


def targets(tmp: Path) -> list[tuple[str, Path, list[str]]]:
    """(label, repo, test targets): the demo repo with its whole suite, and toolz with one test file."""
    from pyharness.evals.projects import PROJECTS, fetch

    demo = tmp / "orders"
    shutil.copytree(ROOT / "demo" / "orders", demo)
    found = [("demo/orders, whole suite", demo, [])]
    try:
        toolz = fetch(PROJECTS["toolz"])
    except Exception as err:  # noqa: BLE001 - no network to the index: measure the demo alone
        print(f"toolz not available ({err}); measuring the demo repo only")
        return found
    copy = tmp / "toolz"
    shutil.copytree(toolz, copy, symlinks=True)
    return [*found, ("toolz 1.2.0, tests/test_itertoolz.py", copy, ["toolz/tests/test_itertoolz.py"])]


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} s (min {min(values):.3f}, max {max(values):.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--against", type=Path, help="another checkout of ph, measured alternately with this one")
    args = parser.parse_args()
    checkouts = {"this": ROOT, **({"against": args.against} if args.against else {})}
    workers = {name: Worker(path) for name, path in checkouts.items()}
    try:
        for name, worker in workers.items():
            print(f"{name} ({worker.checkout}): sandbox {worker.sandbox}")
        with tempfile.TemporaryDirectory(prefix="ph-sandbox-bench-") as tmp:
            for label, repo, tests in targets(Path(tmp)):
                seconds = {(name, on): [] for name in workers for on in (True, False)}
                for _ in range(args.repeat):
                    for name, worker in workers.items():
                        for on in (True, False):
                            seconds[(name, on)].append(worker.run(repo, tests, on))
                print(f"{label}: median of {args.repeat} runs each")
                for name in workers:
                    on, off = (statistics.median(seconds[(name, flag)]) for flag in (True, False))
                    print(f"  {name:8} sandbox on {spread(seconds[(name, True)])}, "
                          f"off {spread(seconds[(name, False)])}; the sandbox adds {on - off:+.3f} s a run "
                          f"({(on / off - 1):+.1%})")
    finally:
        for worker in workers.values():
            worker.close()


if __name__ == "__main__":
    main()
