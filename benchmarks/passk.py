"""Benchmark: the ceiling a perfect judge could reach by choosing among sampled candidates. For each stdout or
HumanEval task, ask the model alone (the oneshot request, the same one search's first candidate uses) once greedy
and K times sampled (seeded, temperature T), score every reply on the task's example and hidden cases, and print
per task how many candidates pass; then pass@1 (greedy) and oracle pass@(K+1) (some candidate passes). Prints
figures; asserts nothing.

    python benchmarks/passk.py --suite humaneval --tasks @evals/humaneval/slice35.txt --k 8 --temperature 0.8
"""

import argparse
import time

from pyharness.evals.oneshot import extract_code, oneshot_message
from pyharness.evals.suites import load_suite
from pyharness.evals.tasks import score_source, select
from pyharness.models.base import END_OF_TURN, ChatOptions
from pyharness.models.resolve import resolve_model
from pyharness.trials.driver import first_block_closed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default="humaneval")
    parser.add_argument("--tasks", default=None, help="ids, a glob, or @file (as ph eval --tasks)")
    parser.add_argument("--model", default="llamacpp:qwen2.5-coder-1.5b")
    parser.add_argument("--k", type=int, default=8)
    parser.add_argument("--temperature", type=float, default=0.8)
    args = parser.parse_args()
    suite = load_suite(args.suite)
    tasks = select(suite.tasks, args.tasks)
    model = resolve_model(args.model)
    greedy_passed = oracle_passed = 0
    started = time.monotonic()
    for task in tasks:
        message = [{"role": "user", "content": oneshot_message(task)}]
        passes, seen = [], {}
        for k in range(args.k + 1):
            options = ChatOptions(stop=END_OF_TURN, max_tokens=768, temperature=0.0 if k == 0 else args.temperature,
                                  seed=k, should_stop=first_block_closed)  # as the trials ask: code, no explanation
            code = extract_code(model.chat(message, options).text)
            if code not in seen:
                seen[code] = score_source(task, code).strict
            passes.append(seen[code])
        greedy_passed += passes[0]
        oracle_passed += any(passes)
        marks = "".join("P" if p else "." for p in passes)
        print(f"{task.id:<34} greedy {'pass' if passes[0] else 'fail'}  {marks}  {sum(passes)}/{len(passes)} "
              f"({len(seen)} distinct)", flush=True)
    n = len(tasks)
    print(f"\n{n} tasks, model {args.model}, 1 greedy + {args.k} samples at temperature {args.temperature}: "
          f"greedy {greedy_passed}/{n}, oracle pass@{args.k + 1} {oracle_passed}/{n} "
          f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
