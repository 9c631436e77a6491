"""What a candidate's check says: run in a scratch copy of the workspace (never the user's tree), read as a Verdict
that ranks candidates, and the one failure a repair is shown."""

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.actions.base import Context
from pyharness.localise.linetrace import RunTrace, trace_test
from pyharness.trials.brief import JobView
from pyharness.trials.taskchecks import CallCheck, run_checks
from pyharness.workspace.failpoints import FailPoint, fail_points
from pyharness.workspace.noise import truncate
from pyharness.workspace.testrun import EXCEPTION_LINE as EXCEPTION
from pyharness.workspace.testrun import TestRun, run_pytest
from pyharness.workspace.tree import SKIP_DIRS, Workspace
from pyharness.workspace.treecopy import copy_tree


@dataclass
class Verdict:
    """What one candidate's check said."""

    green: bool
    passed: int = 0
    failures: int = 0
    errors: int = 0
    failure: str = ""
    """The one failure shown to the next repair ('' when green)."""
    accepted: bool = False
    """The mode's own check passes (the example, the suite), even where an example read from the task text
    does not: such an example may be wrong (HumanEval's own docstrings hold a few), so it ranks candidates
    and keeps the trials going, but does not make a candidate that passes the real check a failure."""
    points: dict[str, FailPoint] = field(default_factory=dict)
    """fix: how far each originally failing test that still fails got (`pyharness.workspace.failpoints`)."""

    @property
    def rank(self) -> tuple:
        """Higher is better: all pass > the mode's check passes > more checks passed > fewer failures > fewer errors."""
        return (self.green, self.accepted, self.passed, -self.failures, -self.errors)


def check_in_scratch(ws: Workspace, job: JobView, ctx: Context, checks: list[CallCheck],
                     files: dict[str, str], whole: bool = False) -> Verdict:
    """Apply `files` in a fresh scratch copy of the workspace and run the mode's check there: add, the suite with the
    new test; fix, the originally failing tests first and, once one of them passes (or with `whole`), the suite,
    with those tests counted apart; stdout, the example plus `checks`, the examples read from the task text."""
    scratch = _scratch(ws, files)
    try:
        guard = ws.guard
        readonly = guard.files() if guard is not None else None
        if job.mode == "fix" and files and job.failing_before and ctx.fail_first and not whole:
            quick = run_pytest(scratch, job.failing_before, timeout=ctx.test_timeout, python=ctx.python,
                               readonly=readonly)
            if not quick.counts.get("passed", 0):
                return _none_fixed(quick, job.failing_before)
        run = run_pytest(scratch, ctx.suite, timeout=ctx.test_timeout, python=ctx.python, readonly=readonly)
        touched = guard.changed_in(scratch) if guard is not None else []
        if touched:  # a candidate that rewrites the judge (possible only without the sandbox) fails outright
            return Verdict(False, 0, len(job.failing_before) or 1, 0,
                           f"the candidate changed test files during the test run: {', '.join(touched[:5])}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if job.mode == "add":
        failure = failure_text(run)
        if run.failing:
            failure = f"{run.failing[0]} fails: {failure}"
        return Verdict(run.green, run.counts.get("passed", 0), len(run.failing), run.counts.get("errors", 0),
                       "" if run.green else failure, accepted=run.green)
    if job.mode == "fix":
        still = [t for t in job.failing_before if t in run.failing]
        passed = run.counts.get("passed", 0)
        failure = failure_text(run)
        if run.failing:
            failure = f"{run.failing[0]} fails: {failure}"
        green = run.green and not still
        return Verdict(green, passed - len(still), len(run.failing), run.counts.get("errors", 0),
                       "" if run.green else failure, accepted=green, points=fail_points(run.output, still))
    # the task's own examples count beside the given one: an example alone is a weak judge
    extra = run_checks(files["main.py"], checks) if files else None
    failure = "" if run.green else failure_text(run)
    if extra and extra.failure and not failure:
        failure = f"the example passes, but an example from the task text fails: {extra.failure}"
    passed = int(run.green) + (extra.passed if extra else 0)
    return Verdict(run.green and not (extra and extra.failure), passed, 0 if run.green else 1, 0, failure,
                   accepted=run.green)


def trace_in_scratch(ws: Workspace, job: JobView, ctx: Context) -> tuple[TestRun, RunTrace]:
    """fix: the originally failing tests run again in a scratch copy of the tree as it is now, and the first that
    still fails traced there (what the line ranking reads after a partial fix was kept); an empty trace when none
    fails."""
    scratch = _scratch(ws, {})
    try:
        readonly = ws.guard.files() if ws.guard is not None else None
        run = run_pytest(scratch, job.failing_before, timeout=ctx.test_timeout, python=ctx.python, readonly=readonly)
        ran = trace_test(scratch, run.failing[0], timeout=ctx.test_timeout, python=ctx.python,
                         readonly=readonly) if run.failing else RunTrace()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return run, ran


def _scratch(ws: Workspace, files: dict[str, str]) -> Path:
    """A fresh scratch copy of the workspace with `files` written over it (the caller removes it)."""
    scratch = Path(tempfile.mkdtemp(prefix="ph-scratch-"))
    try:
        copy_tree(ws.root, scratch, skip=(*SKIP_DIRS, ".ph", "__pycache__"))
        for rel, text in files.items():
            (scratch / rel).parent.mkdir(parents=True, exist_ok=True)
            (scratch / rel).write_text(text, encoding="utf-8")
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return scratch


UNMEASURED = -(10 ** 9)
"""`passed` of a fix candidate whose suite did not run: below any count a run can give."""


def _none_fixed(quick: TestRun, failing: list[str]) -> Verdict:
    """A fix candidate none of whose originally failing tests passes: it cannot beat the code before it (which fails
    them all and passes the rest), so the whole suite is not run for it; on a large test file that run costs ten
    times the few failing tests. The failure shown to the next repair is the same first failing test's."""
    failure = failure_text(quick)
    if quick.failing:
        failure = f"{quick.failing[0]} fails: {failure}"
    return Verdict(False, UNMEASURED, max(len(failing), len(quick.failing)), quick.counts.get("errors", 0), failure,
                   points=fail_points(quick.output, [t for t in failing if t in quick.failing]))


def failure_text(run: TestRun, max_lines: int = 12, max_chars: int = 3000) -> str:
    """The one failure a repair is shown: the `E` lines of the first failing test (the exception or the
    assertion with its message, cut to `max_chars`: one message can hold a whole huge repr), else the run's summary."""
    lines = [ln.strip()[1:].strip() for ln in run.first_traceback.splitlines() if ln.strip().startswith("E ")]
    lines = [ln for ln in lines if ln]
    if len(lines) > max_lines:  # a program's own traceback: its last lines hold the exception
        lines = [lines[0], "...", *lines[-(max_lines - 2):]]
    return truncate("\n".join(lines), max_chars) if lines else run.summary()


def one_line(failure: str) -> str:
    """An earlier attempt in one line: the exception it raised, or what it printed against what was expected."""
    lines = [ln.strip() for ln in failure.splitlines() if ln.strip()]
    raised = [ln for ln in lines if EXCEPTION.match(ln) and not ln.startswith("AssertionError")]
    if raised:
        return raised[-1][:140]
    said = {ln.split(":", 1)[0]: ln.split(":", 1)[1].strip() for ln in lines if ln.startswith(("expected:", "got:"))}
    if "expected" in said and "got" in said:
        return f"printed {said['got'][:60]} where {said['expected'][:60]} was expected"
    return (lines[0] if lines else "failed")[:140]
