"""Benchmark: what the sandbox costs per test run, no model loaded. The same `run_pytest` (as fix mode runs it) on the
demo repo's whole suite and on one test file of a real project (toolz's tests/test_itertoolz.py, from ph's mutant
cache, fetched on first use), with and without the sandbox, alternating, `--repeat` times each. Prints the median and
the spread of seconds per run and the difference of the medians; asserts nothing.

    python benchmarks/sandbox_cost.py --repeat 20
"""

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


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


def measure(repo: Path, tests: list[str], repeat: int) -> dict[bool, list[float]]:
    from pyharness.workspace import sandbox
    from pyharness.workspace.testrun import run_pytest

    seconds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(repeat):
        for on in (True, False):
            with sandbox.override(on):
                started = time.perf_counter()
                run = run_pytest(repo, tests, timeout=300)
                seconds[on].append(time.perf_counter() - started)
            if run.outcome not in ("passed", "failed"):
                raise SystemExit(f"{repo.name}: the run ended {run.outcome}: {run.summary()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    from pyharness.workspace import sandbox

    print(f"sandbox: {sandbox.describe()}")
    with tempfile.TemporaryDirectory(prefix="ph-sandbox-bench-") as tmp:
        for label, repo, tests in targets(Path(tmp)):
            runs = measure(repo, tests, args.repeat)
            on, off = statistics.median(runs[True]), statistics.median(runs[False])
            print(f"{label}: median of {args.repeat} runs: sandbox on {on:.3f} s (min {min(runs[True]):.3f}, "
                  f"max {max(runs[True]):.3f}), off {off:.3f} s (min {min(runs[False]):.3f}, "
                  f"max {max(runs[False]):.3f}); the sandbox adds {on - off:+.3f} s a run ({(on / off - 1):+.1%})")


if __name__ == "__main__":
    main()
