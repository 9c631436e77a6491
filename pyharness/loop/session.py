"""Set up one run: the workspace, the job, the model's actions, and the agent that drives them."""

from collections.abc import Callable
from pathlib import Path

from pyharness.actions import CORE, registry
from pyharness.actions.base import Action, Context
from pyharness.errors import UserError
from pyharness.harness.pipeline import HarnessConfig
from pyharness.harness.rank import choose
from pyharness.loop.agent import Agent
from pyharness.loop.jobs import MODE_ACTIONS, Job
from pyharness.loop.runs import AgentConfig
from pyharness.models.base import Model
from pyharness.runstate import RunResult
from pyharness.workspace.interpreter import Interpreter
from pyharness.workspace.lock import RepoLock
from pyharness.workspace.tree import Workspace


def check_repo(repo: Path) -> Path:
    """The repo path, or a UserError that says what is wrong with it."""
    path = Path(repo).expanduser()
    if not path.exists():
        raise UserError(f"repo {path} does not exist")
    if not path.is_dir():
        raise UserError(f"repo {path} is not a directory")
    return path.resolve()


def offered(job: Job, harness: HarnessConfig) -> dict[str, Action]:
    """The mode's core actions plus user actions (entry points); with the rank layer, only the best few."""
    every = registry()
    core = [every[name] for name in job.actions]
    extra = [a for name, a in every.items() if name not in CORE] if job.mode in ("fix", "add", "run") else []
    chosen = choose(core, extra, job.task) if harness.on("rank") else core + extra
    return {a.name: a for a in chosen}


def run_job(repo: Path, mode: str, task: str, model: Model, *, tests: list[str] | None = None,
            harness: HarnessConfig | None = None, config: AgentConfig | None = None,
            emit: Callable[..., None] | None = None, default_write_path: str | None = None,
            test_timeout: float = 60.0, escalate: Model | None = None,
            python: Interpreter | None = None) -> RunResult:
    """Run one job to its end and return how it went (the transcript is under REPO/.ph/runs/). `python` runs the
    repo's code (default: ph's own interpreter; the cli chooses the project's, pyharness.workspace.interpreter)."""
    if mode not in MODE_ACTIONS:
        raise UserError(f"unknown mode {mode!r}")
    emit = emit or (lambda kind, **d: None)
    ws = Workspace(check_repo(repo), protect_tests=mode in ("fix", "stdout"), emit=emit)
    with RepoLock(ws.root):  # one run per repo; the kernel drops the lock if this process is killed
        ws.clean_stale_temps()  # a killed run's temp files (safe: no other run holds the lock)
        emit("start", mode=mode, task=task, model=model.name, repo=str(ws.root),
             python=python.describe() if python is not None else "")
        for backend in (model, escalate):
            _load(backend, emit)
        if mode == "fix":
            from pyharness.workspace.protect import TestGuard

            ws.guard = TestGuard.start(ws, python=python.path if python else None, tests=list(tests or []))
        ctx = Context(workspace=ws, test_timeout=test_timeout, keep_definitions=mode != "stdout", task=task,
                      python=python.path if python else None, interpreter=python)
        job = Job(mode=mode, task=task, tests=list(tests or []))
        harness = harness or HarnessConfig()
        agent = Agent(model, job, ctx, offered(job, harness), config=config, harness=harness, emit=emit,
                      default_write_path=default_write_path, escalate=escalate)
        return agent.run()


def _load(model: Model | None, emit: Callable[..., None]) -> None:
    """Load an in-process model (llama.cpp) now, announced, rather than inside the first turn: a load takes
    seconds to minutes, and the view should say so instead of looking like a model that thinks."""
    if model is not None and not model.loaded:
        emit("phase", name=f"loading model {model.name}")
        model.load()
