"""What every action shares: the `Action` record, the `Context` it runs in, the `Observation` it returns."""

import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from pydantic import BaseModel

from pyharness.workspace.interpreter import Interpreter
from pyharness.workspace.testrun import TestRun
from pyharness.workspace.tree import Workspace


@dataclass
class Observation:
    """What an action gives back to the model (text) and to the harness (data)."""

    text: str
    ok: bool = True
    final: bool = False
    """True for answer/done: the harness checks the job's acceptance rule next."""
    data: dict = field(default_factory=dict)


@dataclass
class Context:
    """The workspace and settings an action runs with."""

    workspace: Workspace
    test_timeout: float = 60.0
    lint: bool = True
    """Refuse writes/edits that break a parsing Python file (the harness lint layer)."""
    spectrum: bool = True
    """fix mode: rank the suspect functions by which lines the failing and the passing tests ran (the harness
    spectrum layer)."""
    fail_first: bool = True
    """fix mode trials: check a candidate on the originally failing tests first and run the suite only once one of
    them passes (the harness failfirst layer)."""
    task: str = ""
    """The job's task text (the lint repair reads module paths from it)."""
    keep_definitions: bool = True
    """Refuse (or merge) a whole-file write that would delete functions; off where rewriting is the job."""
    python: str | None = None
    """The interpreter that runs the repo's code: every test run, collection, trace and candidate check (default:
    the one running ph)."""
    interpreter: Interpreter | None = None
    """How `python` was chosen (path, versions, source), for the transcript."""
    suite: list[str] = field(default_factory=list)
    """What "the suite" is for this job: the test files or node ids `ph fix TESTS...` named (a mutant job's judging
    files), or all tests when empty. A run of the suite (run_tests without a target, acceptance, a trial
    candidate's check) runs these."""
    last_test: TestRun | None = None
    """The latest `TestRun`, for the harness's acceptance checks."""

    def python_line(self) -> str:
        """Which interpreter runs the repo's code, and why, in one line (the transcript's start record)."""
        if self.interpreter is not None:
            return self.interpreter.describe()
        source = "given" if self.python else "ph's own"
        return f"python: {self.python or sys.executable} ({source})"


@dataclass
class Action:
    """A named action: its argument schema, what it does, and how to call it."""

    name: str
    args: type[BaseModel]
    run: Callable[[BaseModel, Context], Observation]
    description: str
    example: str
    """A complete, literal example reply that calls this action (shown in prompts and error messages)."""
    body_arg: str | None = None
    """The argument that the body block after the Action line fills (file content, edit blocks)."""
    aliases: tuple[str, ...] = ()
