"""Where each failing test failed: the line of the test it had reached, and whether the failure is the test's own
assertion (read from pytest's `--tb=short` sections).

A change that moves a failing test on to a later line of it (an earlier assertion now holds), or that turns an
exception raised inside the code into the test's own assertion on the same line (the code now returns something),
made that test do better without making it pass: the trials' `stacking` keeps such a change as a partial fix, so
the next hole of a fix of several hunks is filled on top of it.
"""

import re
from dataclasses import dataclass

SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.MULTILINE)
FRAME = re.compile(r"^(\S+?\.py):(\d+): in \S+", re.MULTILINE)
"""One frame of a short traceback: `tests/test_m.py:8: in test_f`."""


@dataclass(frozen=True, order=True)
class FailPoint:
    """How far one failing test got: later lines, and the test's own assertion over an exception, are further."""

    line: int
    """The line of the test file its first frame was on."""
    asserted: bool
    """The failure is an assertion raised in the test file (not an exception from the code it called)."""


def fail_points(output: str, failing: list[str]) -> dict[str, FailPoint]:
    """The fail point of each of the `failing` test ids whose section the output holds (a test that failed in a
    fixture, or whose section was cut from the output, has none)."""
    by_header: dict[str, list[str]] = {}
    for node_id in failing:
        by_header.setdefault(node_id.partition("::")[2].replace("::", "."), []).append(node_id)
    headers = list(SECTION.finditer(output))
    points: dict[str, FailPoint] = {}
    for n, header in enumerate(headers):
        ids = [i for i in by_header.get(header.group(1), []) if i not in points]
        if not ids:
            continue
        body = output[header.end():headers[n + 1].start() if n + 1 < len(headers) else len(output)]
        path = ids[0].partition("::")[0]
        frames = FRAME.findall(body)
        in_test = [int(line) for file, line in frames if file == path]
        if not in_test:
            continue
        errors = [line.strip()[1:].strip() for line in body.splitlines() if line.strip().startswith("E ")]
        said = errors[0] if errors else ""
        points[ids[0]] = FailPoint(in_test[0], frames[-1][0] == path and said.startswith(("assert", "AssertionError")))
    return points


def progress(before: dict[str, FailPoint], after: dict[str, FailPoint]) -> tuple[list[str], list[str]]:
    """(the tests that got further, those that fell back) among those failing both before and after."""
    further, back = [], []
    for node_id, was in before.items():
        now = after.get(node_id)
        if now is not None and now > was:
            further.append(node_id)
        elif now is not None and now < was:
            back.append(node_id)
    return further, back
