"""Choosing among candidates that all pass the visible checks, by how they agree on inputs nobody checked.

On function tasks most misses passed every visible check (the given example and the task's own examples) and failed
hidden ones (docs/results.md): the trials stopped at the first candidate that passed, with no better judge. Here a few
more
candidates are sampled, and every passing one runs on probe inputs made from the task's example calls by small
changes of one literal argument at a time (a number +-1, 0, negated; a string emptied, reversed, cut; a list emptied,
reversed, cut, extended). The candidate whose results agree with the most others is kept; ties keep the earliest
(the greedy one first). The idea is that of CodeT / MBR-exec: independent samples are more often right together
than wrong in the same way. No result is ever taken as the right one; only agreement counts.
"""

import ast
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from pyharness.trials.taskchecks import CallCheck
from pyharness.workspace.procs import clean_env, run_once

MAX_PROBES = 30
DRIVER_CALL = re.compile(r"print\(repr\((.+)\)\)\s*$")
RUNNER = r"""
import json, sys
source, calls = json.load(sys.stdin)
ns = {"__name__": "__ph_probe__"}
try:
    exec(compile(source, "main.py", "exec"), ns)
except BaseException as exc:
    print(json.dumps([f"main.py raised {type(exc).__name__}"] * len(calls)))
    sys.exit(0)
out = []
for call in calls:
    try:
        out.append(repr(eval(call, ns))[:300])
    except BaseException as exc:
        out.append(f"raised {type(exc).__name__}")
print(json.dumps(out))
"""


def seed_calls(task: str, checks: list[CallCheck]) -> list[str]:
    """The example calls a task states: its checks, and the call its example driver prints."""
    calls = [check.call for check in checks]
    for line in task.splitlines():
        said = DRIVER_CALL.match(line.strip())
        if said:
            calls.append(said.group(1))
    return list(dict.fromkeys(calls))


def probe_calls(seeds: list[str], limit: int = MAX_PROBES) -> list[str]:
    """Calls like the seeds with one literal argument changed a little (the seeds themselves left out)."""
    probes: list[str] = []
    for seed in seeds:
        try:
            call = ast.parse(seed, mode="eval").body
        except (SyntaxError, ValueError):
            continue
        if not isinstance(call, ast.Call):
            continue
        for slot, arg in enumerate(call.args):
            try:
                value = ast.literal_eval(arg)
            except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                continue
            for variant in _variants(value):
                args = [*call.args]
                args[slot] = ast.parse(repr(variant), mode="eval").body
                text = ast.unparse(ast.Call(call.func, args, call.keywords))
                if text not in probes and text not in seeds:
                    probes.append(text)
    # spread the probes over the seeds' arguments rather than taking the first seed's only
    return probes[::max(1, len(probes) // limit)][:limit]


def _variants(value) -> list:
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, int):
        return [value + 1, value - 1, 0, -value, value * 3 + 7]
    if isinstance(value, float):
        return [value + 0.5, -value, 0.0]
    if isinstance(value, str):
        return [value[::-1], value[1:], value + value[:1], value.upper(), value.swapcase(), " " + value, ""]
    if isinstance(value, list | tuple):
        kind = type(value)
        return [kind(reversed(value)), value[1:], value[:-1], value + value[:1], kind(sorted(value, key=repr)),
                kind()]
    return []


def behaviour(code: str, calls: list[str], timeout: float = 10.0,
              python: str | None = None) -> tuple[str, ...] | None:
    """What `code` returns (repr) or raises on each call, run once in a subprocess; None when it cannot be run."""
    with tempfile.TemporaryDirectory(prefix="ph-probe-") as tmp:
        try:
            proc = run_once([python or sys.executable, "-c", RUNNER], stdin=json.dumps([code, calls]), timeout=timeout,
                            cwd=Path(tmp), env=clean_env())
            rows = json.loads(proc.stdout.strip().splitlines()[-1])
        except (subprocess.TimeoutExpired, json.JSONDecodeError, IndexError):
            return None
    return tuple(rows) if isinstance(rows, list) and len(rows) == len(calls) else None


def choose(codes: list[str], calls: list[str], known: dict | None = None,
           python: str | None = None) -> tuple[int, int]:
    """(index of the code whose behaviour on `calls` the most codes share, how many share it); ties: earliest.
    `known` holds behaviours already worked out, by code (filled in here for the rest); `python` runs them."""
    if len(codes) < 2 or not calls:
        return 0, 1
    known = {} if known is None else known
    for code in codes:
        if code not in known:
            known[code] = behaviour(code, calls, python=python)
    seen = [known[code] for code in codes]
    support = [sum(1 for other in seen if mine is not None and other == mine) for mine in seen]
    best = max(range(len(codes)), key=lambda i: (support[i], -i))
    return best, support[best]
