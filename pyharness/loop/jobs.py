"""What each mode (ask/fix/add/run/stdout) lets the model do, and when the harness accepts it as done."""

import hashlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.actions.base import Context, Observation
from pyharness.errors import ActionError, Done, StopRun
from pyharness.localise.filerank import tests_query
from pyharness.localise.linetrace import RunTrace
from pyharness.loop.citations import check_answer
from pyharness.loop.prompts import add_task, ask_task, fix_task, related_source, repo_map, run_task
from pyharness.workspace.testrun import TestRun, check_judge, judge_files, run_in_tree, run_pytest
from pyharness.workspace.tree import SKIP_DIRS, Workspace
from pyharness.workspace.treecopy import copy_tree

MODE_ACTIONS = {
    "ask": ("read", "search", "list", "answer"),
    "fix": ("read", "search", "list", "edit", "write", "run_tests", "done"),
    "add": ("read", "search", "list", "edit", "write", "run_tests", "done"),
    "run": ("read", "search", "list", "edit", "write", "run_tests", "done"),
    "stdout": ("write", "run_tests", "done"),  # no read: the model has main.py in its history, and a read
    # example naming main.py made it open the task by reading a file that does not exist yet
}


@dataclass
class Job:
    """One job in one repo: its mode, the task text, and the evidence its acceptance rule needs."""

    mode: str
    task: str = ""
    tests: list[str] = field(default_factory=list)
    """fix: the tests to make pass (default: the whole suite)."""
    failing_before: list[str] = field(default_factory=list)
    test_hashes: dict[str, str] = field(default_factory=dict)
    original: Path | None = None
    """add: a copy of the repo as it was, to prove the new test fails on the old code."""
    first_run: TestRun | None = None
    trace: RunTrace | None = None
    """fix: what the repo's code did in the first failing test (lines that ran, condition values)."""

    @property
    def actions(self) -> tuple[str, ...]:
        """The action names this mode offers."""
        return MODE_ACTIONS[self.mode]

    def prepare(self, ws: Workspace, ctx: Context) -> str:
        """Record what acceptance needs and return the first task message."""
        self.test_hashes = _test_hashes(ws)
        files = repo_map(ws, self.task) if self.mode != "fix" else ""
        if self.mode == "ask":
            return ask_task(self.task, files)
        if self.mode == "fix":
            ctx.suite = list(self.tests)
            self.first_run = run_in_tree(ws, self.tests, ctx)
            self.failing_before = list(self.first_run.failing)
            from pyharness.localise.linetrace import trace_test
            from pyharness.localise.spectrum import spectrum

            ran = RunTrace()
            if self.failing_before:
                ws.emit("phase", name="tracing the failing tests")
                judge = judge_files(ws)
                ran = trace_test(ws.root, self.failing_before[0], timeout=ctx.test_timeout, python=ctx.python,
                                 readonly=judge)
                files = list(dict.fromkeys(node.split("::")[0] for node in self.failing_before))
                ran.scores = (spectrum(ws.root, files, self.failing_before, python=ctx.python, readonly=judge)
                              if ctx.spectrum else {})
                check_judge(ws)
            self.trace = ran
            traceback = self.first_run.first_traceback
            related = related_source(ws, traceback, ran=ran)
            files = repo_map(ws, f"{self.task}\n{tests_query(ws, self.failing_before)}", traceback)
            return fix_task(self.task, self.first_run.observation(), related, files)
        if self.mode == "add":
            self.original = Path(tempfile.mkdtemp(prefix="ph-original-"))
            copy_tree(ws.root, self.original, skip=SKIP_DIRS)
            return add_task(self.task, files)
        if self.mode == "stdout":
            return self.task
        return run_task(self.task, files)

    def example_path(self, ws: Workspace) -> str | None:
        """A real source file for the prompt's examples: the suspect's (fix), else the repo's first source file."""
        from pyharness.trials.suspects import suspects

        found = (suspects(ws, self.first_run.first_traceback, self.trace, self.failing_before[0])
                 if self.first_run and self.trace and self.failing_before else [])
        files = [rel for rel in ws.files() if rel.endswith(".py") and not ws.is_test_path(rel)]
        return ([u.path for u in found] or files or [None])[0]

    def nothing_to_do(self) -> StopRun | None:
        """fix mode with nothing failing: done when the suite is green (nothing to fix), stopped when the tests could
        not run; None when there is work."""
        if self.mode == "fix" and self.first_run is not None and not self.failing_before:
            if self.first_run.green:
                return Done(f"nothing to fix: {self.first_run.summary()}")
            return StopRun(f"the tests could not run: {self.first_run.summary()}\n"
                           f"{self.first_run.output[-1500:]}")
        return None

    def accept(self, final: Observation, ws: Workspace, ctx: Context) -> str:
        """Check the mode's acceptance rule; returns a one-line verdict or raises ActionError with the evidence."""
        if self.mode == "ask":
            return check_answer(final.text, ws)
        changed_tests = [p for p, h in _test_hashes(ws).items() if self.test_hashes.get(p) != h]
        removed = [p for p in self.test_hashes if not (ws.root / p).exists()]
        if self.mode == "fix" and (changed_tests or removed):
            raise ActionError(
                f"not done: test files changed ({', '.join(changed_tests + removed)}); "
                "the tests are the judge — change the code instead"
            )
        suite = run_in_tree(ws, None, ctx)
        ctx.last_test = suite
        if self.mode == "stdout":
            if not suite.green:
                raise ActionError("not done: the example test does not pass yet.\n" + suite.observation())
            return "the example test passes"
        if suite.exit_code == 5 and self.mode == "run":
            return "done; the repo has no tests"
        if not suite.green:
            raise ActionError("not done: the test suite is not green.\n" + suite.observation())
        if self.mode == "fix":
            again = run_in_tree(ws, self.failing_before, ctx)
            if not again.green or again.counts.get("passed", 0) < len(self.failing_before):
                raise ActionError("not done: the tests that failed before do not all pass.\n" + again.observation())
            return f"{len(self.failing_before)} failing test(s) now pass; {suite.summary()}"
        if self.mode == "add":
            return self._accept_new_tests(changed_tests, suite, ctx)
        return f"suite green: {suite.summary()}"

    def _accept_new_tests(self, changed_tests: list[str], suite: TestRun, ctx: Context) -> str:
        new_tests = [p for p in changed_tests if p.endswith(".py") and Path(p).name.startswith("test")]
        if not new_tests:
            raise ActionError(
                "not done: add a test for the feature in a new file under tests/ "
                "(e.g. tests/test_feature.py), then run_tests"
            )
        assert self.original is not None
        trial = Path(tempfile.mkdtemp(prefix="ph-trial-"))
        try:
            copy_tree(self.original, trial)
            for rel in new_tests:
                (trial / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ctx.workspace.root / rel, trial / rel)
            ctx.workspace.emit("phase", name="checking the new test on the old code")
            before = run_pytest(trial, new_tests, timeout=ctx.test_timeout, python=ctx.python)
        finally:
            shutil.rmtree(trial, ignore_errors=True)
        if before.green:
            raise ActionError(
                f"not done: the new test ({', '.join(new_tests)}) also passes on the original code, "
                "so it does not test the feature; test the new behaviour"
            )
        return f"new test {new_tests[0]} fails on the old code and passes now; {suite.summary()}"

    def cleanup(self) -> None:
        """Remove temporary copies."""
        if self.original is not None:
            shutil.rmtree(self.original, ignore_errors=True)


def _test_hashes(ws: Workspace) -> dict[str, str]:
    return {p: hashlib.sha256((ws.root / p).read_bytes()).hexdigest() for p in ws.files() if ws.is_test_path(p)}
