"""Benchmark: `ph eval --on ray` against the plain runner on the same 10 stdout tasks with one model (issue 26).

    .venv/bin/python benchmarks/ray_overhead.py --model llamacpp:qwen2.5-coder-1.5b
    .venv/bin/python benchmarks/ray_overhead.py --model scripted:DIR        # the machinery alone, no model

The tasks are the first 10 of evals/stdout/slice20.txt, one configuration (default harness=on), each run bounded by
--max-steps / --max-seconds (default 8 / 120, as `make eval`). Both runs write into fresh temporary folders; the plain
runner goes first, with one worker (a llama.cpp model serves one thread), then a local Ray is started with this
machine's cores and the same plan goes through `run_on_ray` (a llama.cpp run asks for --threads CPUs; default all).

Printed, for each: wall time, runs per hour, time to the first result (for Ray from before `ray.init`, with the start-up
also on its own line), passes, the runs' own mean wall time (as their records say) and (wall time - the records' wall
time) / runs, the runner's own cost per run while runs go one at a time (as embedded runs do on 2 cores: each asks Ray
for both; runs that overlap make it negative). The last line is Ray's cost per run over the plain runner, in wall time.
Prints figures; asserts nothing. Run it alone: on 2 cores anything beside it moves the figures.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from pyharness.evals.configs import parse_configs
from pyharness.evals.runner import EvalPlan, Models, run_eval
from pyharness.evals.suites import load_suite
from pyharness.evals.tasks import select
from pyharness.loop.agent import AgentConfig

ROOT = Path(__file__).resolve().parents[1]
TASKS = 10


class Clock:
    """Counts finished runs and notes when the first came back."""

    def __init__(self):
        self.started = time.monotonic()
        self.first: float | None = None
        self.records: list[dict] = []

    def __call__(self, record: dict, done: int, total: int) -> None:
        if self.first is None:
            self.first = time.monotonic() - self.started
        self.records.append(record)
        print(f"  [{done}/{total}] {record['task']}: {'pass' if record['pass_strict'] else 'fail'} "
              f"({record['wall_seconds']:.1f} s)", file=sys.stderr, flush=True)

    def figures(self) -> dict:
        wall = time.monotonic() - self.started
        runs = len(self.records)
        own = sum(r["wall_seconds"] for r in self.records)
        return {"wall (s)": wall, "runs/hour": 3600 * runs / wall if wall else 0.0, "first result (s)": self.first,
                "passed": f"{sum(r['pass_strict'] for r in self.records)}/{runs}",
                "run wall, mean (s)": statistics.mean(r["wall_seconds"] for r in self.records) if runs else None,
                "(wall - runs) / run (s)": (wall - own) / runs if runs else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, help="the model spec, e.g. llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--configs", default="harness=on")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--max-seconds", type=float, default=120.0)
    parser.add_argument("--threads", type=int, default=None, help="llama.cpp threads per Ray run (default: cores)")
    args = parser.parse_args()
    import ray

    from pyharness.evals.fanout import run_on_ray

    tasks = select(load_suite("stdout").tasks, f"@{ROOT / 'evals' / 'stdout' / 'slice20.txt'}")[:TASKS]
    plan = EvalPlan("stdout", tasks, [args.model], parse_configs([args.configs]),
                    agent=AgentConfig(max_steps=args.max_steps, max_seconds=args.max_seconds))
    runs = len(tasks) * len(plan.configs)
    print(f"ray_overhead: {len(tasks)} stdout tasks x {len(plan.configs)} config(s) = {runs} runs, {args.model}, "
          f"{os.cpu_count()} cores, Ray {ray.__version__}", flush=True)
    with tempfile.TemporaryDirectory(prefix="ph-bench-ray-") as tmp:
        plain = Clock()
        run_eval(plan, Path(tmp) / "plain", Models([args.model]), on_result=plain)
        plain_figures = plain.figures()
        on_ray = Clock()
        ray.init(address="local", num_cpus=os.cpu_count(), include_dashboard=False, log_to_driver=False)
        startup = time.monotonic() - on_ray.started
        try:
            run_on_ray(plan, Path(tmp) / "ray", threads=args.threads, on_result=on_ray)
        finally:
            ray.shutdown()
        ray_figures = on_ray.figures()
    print(f"{'':26s}{'plain':>12s}{'--on ray':>12s}")
    for name in plain_figures:
        print(f"{name:26s}{show(plain_figures[name]):>12s}{show(ray_figures[name]):>12s}")
    print(f"{'ray.init (s)':26s}{'':>12s}{show(startup):>12s}")
    if runs:
        extra = (ray_figures["wall (s)"] - plain_figures["wall (s)"]) / runs
        print(f"Ray over the plain runner: {extra:+.2f} s of wall time per run")


def show(value) -> str:
    return "–" if value is None else value if isinstance(value, str) else f"{value:.2f}"


if __name__ == "__main__":
    main()
