"""Spectrum-based fault localisation for fix mode: which lines the failing tests ran and the passing ones did not.

The test files that hold the failing tests run once more in a subprocess, traced (`sys.settrace`) only while each
test itself runs, counting for every line of the repo's non-test code how many failing and how many passing tests
ran it. A line's suspiciousness is the Ochiai score, failed(line) / sqrt(failed * (failed(line) + passed(line))):
1.0 for a line every failing test ran and no passing test did. A line the passing tests also ran is less likely the
bug, which "named in the traceback, then most lines run" cannot tell (benchmarks/localise.py measures both; the
figures are in docs/results.md).

The failing tests run first; the run has a deadline: past it, pytest stops after the current test and the counts
so far are kept (a traced run takes about twice a plain one, and a real project's test file can hold a thousand
tests).
"""

import json
import math
from pathlib import Path

from pyharness.localise.linetrace import run_script

SECONDS = 15.0
"""How long the traced run may take (it stops after the test that passes this, keeping what it counted)."""

TRACER = r"""
import json, os, sys, time
import pytest
root, out, deadline = sys.argv[1], sys.argv[2], time.monotonic() + float(sys.argv[3])
first = set(json.loads(sys.argv[4]))
mine, ran, counts, totals = {}, set(), {}, {"failed": 0, "passed": 0}

def lines(frame, event, arg):
    if event == "line":
        ran.add((frame.f_code.co_filename, frame.f_lineno))
    return lines

def calls(frame, event, arg):
    name = frame.f_code.co_filename
    if name not in mine:
        base = os.path.basename(name)
        mine[name] = name.startswith(root) and "/tests/" not in name and not base.startswith("test_")
    return lines if mine[name] else None

class Spectrum:
    def pytest_collection_modifyitems(self, items):
        items.sort(key=lambda item: item.nodeid not in first)  # stable: the failing tests first, then the rest

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        ran.clear()
        sys.settrace(calls)
        try:
            yield
        finally:
            sys.settrace(None)
            if time.monotonic() > deadline:
                item.session.shouldstop = "the spectrum's time is up"

    def pytest_runtest_logreport(self, report):
        if report.when != "call" or report.outcome not in totals:
            return
        totals[report.outcome] += 1
        slot = 0 if report.outcome == "failed" else 1
        for key in ran:
            counts.setdefault(key, [0, 0])[slot] += 1
        ran.clear()

try:
    pytest.main([*sys.argv[5:], "-q", "-p", "no:cacheprovider", "--no-header"], plugins=[Spectrum()])
finally:
    table = {}
    for (name, line), pair in counts.items():
        table.setdefault(name[len(root):].lstrip("/"), {})[line] = pair
    with open(out, "w") as f:
        json.dump({**totals, "lines": table}, f)
"""


def ochiai(failed_here: int, passed_here: int, failed: int) -> float:
    """How suspicious a line is that `failed_here` of `failed` failing tests and `passed_here` passing tests ran."""
    if not failed or not failed_here:
        return 0.0
    return failed_here / math.sqrt(failed * (failed_here + passed_here))


def spectrum(root: Path, targets: list[str], failing: list[str] = (), seconds: float = SECONDS,
             python: str | None = None, readonly: list[str] | None = None) -> dict[str, dict[int, float]]:
    """file -> line -> Ochiai score, for the lines of non-test files that a failing test of `targets` ran ({} when
    no test failed in the traced run, or it could not run). The `failing` test ids run first, so a run cut short
    by its deadline has them and as many passing tests as fitted."""
    data = run_script(root, TRACER, [str(seconds), json.dumps(list(failing)), *targets], seconds + 30, python,
                      readonly)
    failed = data.get("failed", 0)
    return {rel: {int(n): ochiai(ef, ep, failed) for n, (ef, ep) in lines.items() if ef}
            for rel, lines in data.get("lines", {}).items() if any(ef for ef, _ in lines.values())}

