"""What each mode (ask/fix/add/run/stdout) lets the model do, and when the harness accepts it as done."""

import ast
import hashlib
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pyharness.actions.base import Context, Observation
from pyharness.loop.citations import check_answer
from pyharness.errors import ActionError
from pyharness.localise.filerank import focus, tests_query
from pyharness.loop.prompts import repo_map
from pyharness.workspace.testrun import TestRun, check_judge, judge_files, run_in_tree, run_pytest
from pyharness.workspace.treecopy import copy_tree
from pyharness.workspace.tree import SKIP_DIRS, Workspace

if TYPE_CHECKING:
    from pyharness.localise.linetrace import RunTrace

MODE_ACTIONS = {
    "ask": ("read", "search", "list", "answer"),
    "fix": ("read", "search", "list", "edit", "write", "run_tests", "done"),
    "add": ("read", "search", "list", "edit", "write", "run_tests", "done"),
    "run": ("read", "search", "list", "edit", "write", "run_tests", "done"),
    "stdout": ("write", "run_tests", "done"),  # no read: the model has main.py in its history, and a read
    # example naming main.py made it open the task by reading a file that does not exist yet
}
FIX_ASK = "Which line is wrong? Write one Thought line that names it and says why, then the edit of that line."
CALLED = re.compile(r"\b([A-Za-z_]\w*)\(")


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
    trace: "RunTrace | None" = None
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
            return (
                f"Question: {self.task}\n\nRepository files:\n{files}\n\nFind the answer in the code (search or "
                "read), then use answer and cite the file as path:line."
            )
        if self.mode == "fix":
            ctx.suite = list(self.tests)
            self.first_run = run_in_tree(ws, self.tests, ctx)
            self.failing_before = list(self.first_run.failing)
            extra = f"\nAlso: {self.task}" if self.task else ""
            from pyharness.localise.linetrace import RunTrace, trace_test
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
            return (
                f"The tests fail. Fix the code so that they pass; do not change the tests.{extra}\n\n"
                f"{self.first_run.observation()}\n\n{related}Repository files:\n{files}\n\n{FIX_ASK}"
            )
        if self.mode == "add":
            self.original = Path(tempfile.mkdtemp(prefix="ph-original-"))
            copy_tree(ws.root, self.original, skip=SKIP_DIRS)
            return (
                f"Feature to add: {self.task}\n\nSteps: write a test for it in a new file under tests/, implement "
                f"it, run_tests, then done.\n\nRepository files:\n{files}"
            )
        if self.mode == "stdout":
            return self.task
        return f"Task: {self.task}\n\nWhen the change is made, run_tests, then done.\n\nRepository files:\n{files}"

    def example_path(self, ws: Workspace) -> str | None:
        """A real source file for the prompt's examples: the suspect's (fix), else the repo's first source file."""
        from pyharness.trials.suspects import suspects

        found = (suspects(ws, self.first_run.first_traceback, self.trace, self.failing_before[0])
                 if self.first_run and self.trace and self.failing_before else [])
        files = [rel for rel in ws.files() if rel.endswith(".py") and not ws.is_test_path(rel)]
        return ([u.path for u in found] or files or [None])[0]

    def nothing_to_do(self) -> str | None:
        """fix mode with a green suite: the reason there is nothing to fix."""
        if self.mode == "fix" and self.first_run is not None and not self.failing_before:
            if self.first_run.green:
                return f"nothing to fix: {self.first_run.summary()}"
            return f"the tests could not run: {self.first_run.summary()}\n{self.first_run.output[-1500:]}"
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


def related_source(ws: Workspace, traceback: str, limit: int = 2, ran: "RunTrace | None" = None) -> str:
    """The code the failing test calls: functions named in the traceback, from non-test files, numbered.

    With `ran` (a trace of the failing test), the lines that ran are marked `>` (where the test went), and
    under each branch condition that ran come the values it saw and what it came to.
    """
    names = list(dict.fromkeys(CALLED.findall(traceback)))
    shown = []
    for rel in focus(ws, traceback, extra=list(ran.lines) if ran else []):
        source = (ws.root / rel).read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        lines = source.splitlines()
        constants = {
            t.id: node.lineno
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in names:
                start, end = node.lineno, min(node.end_lineno or node.lineno, node.lineno + 30)
                used = sorted(
                    {constants[n.id] for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in constants}
                )
                numbered = [*used, *range(start, end + 1)]
                marks = ran.lines.get(rel, set()) if ran else set()
                notes = ran.notes.get(rel, {}) if ran else {}
                body = "\n".join(
                    f"{n:>3}{'>' if n in marks else '|'} {lines[n - 1]}"
                    + (f"\n     (in the failing test: {notes[n]})" if n in notes and n in marks else "")
                    for n in numbered
                )
                if marks & set(range(start, end + 1)):
                    body += "\n(lines marked > ran in the failing test)"
                rank = (isinstance(node, ast.ClassDef), names.index(node.name))
                shown.append((rank, f"{node.name} is defined in {rel} (lines {start}-{end}):\n{body}\n\n"))
    if any(not is_class for (is_class, _), _ in shown):  # a class named in a repr is data, not the suspect
        shown = [item for item in shown if not item[0][0]]
    return "".join(text for _, text in sorted(shown)[:limit])


def _test_hashes(ws: Workspace) -> dict[str, str]:
    return {p: hashlib.sha256((ws.root / p).read_bytes()).hexdigest() for p in ws.files() if ws.is_test_path(p)}
