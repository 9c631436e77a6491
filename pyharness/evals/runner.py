"""`ph eval`: run a suite's tasks for each model x configuration x repeat, interleaved, one JSON line per run.

`perform` is one run wherever it goes (a thread here, a Ray worker with `--on ray`: `pyharness.evals.fanout`); it
returns the record and the transcript, and one writer (`records.ResultsFile`) appends them. Every record names the
machine that ran it (`host`) and the model server that answered (`server`, '' for an in-process or scripted model).
"""

import socket
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Protocol

from pyharness.errors import ModelError
from pyharness.evals.bugs import BugJob
from pyharness.evals.configs import EvalConfig
from pyharness.evals.mutants import MutantJob
from pyharness.evals.oneshot import run_oneshot
from pyharness.evals.oneshot_jobs import run_oneshot_job
from pyharness.evals.records import ResultsFile, RunOutput
from pyharness.evals.report import read_results, record_key
from pyharness.evals.stdoutrepo import make_stdout_repo
from pyharness.evals.tasks import JobTask, StdoutTask, Task, score_source, task_message
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.runs import AgentConfig
from pyharness.models.base import Model
from pyharness.runstate import Outcome, RunResult
from pyharness.trials.schedule import PRESETS
from pyharness.workspace import sandbox
from pyharness.workspace.interpreter import Interpreter


@dataclass
class EvalPlan:
    """What to run: tasks x repeats x models x configurations, and the budgets of each run."""

    suite: str
    tasks: list[Task]
    models: list[str]
    configs: list[EvalConfig]
    repeats: int = 1
    agent: AgentConfig = field(default_factory=AgentConfig)
    test_timeout: float = 60.0
    python: Interpreter | None = None
    """`--python`: the interpreter that runs every job's code (None: ph's own, or a job's own environment)."""


@dataclass(frozen=True)
class RunSpec:
    """One run of the plan; `order` is its place in the interleaved sequence."""

    order: int
    task: Task
    model: str
    config: EvalConfig
    repeat: int

    @property
    def key(self) -> tuple:
        """What identifies the run in results.jsonl (and makes a rerun skip it)."""
        return (self.task.id, self.model, self.config.name, self.repeat)


def interleave(plan: EvalPlan) -> list[RunSpec]:
    """For each task, for each repeat, for each (model, config): drift in machine speed hits all alike."""
    runs = []
    for task in plan.tasks:
        for repeat in range(plan.repeats):
            for model in plan.models:
                for config in plan.configs:
                    runs.append(RunSpec(len(runs), task, model, config, repeat))
    return runs


class ModelSource(Protocol):
    """What hands a run its model: `Models` here, `remote.RecipeModels` on a Ray worker."""

    def for_run(self, spec: str, task_id: str) -> Model: ...


class Models:
    """Hands each run its model: a fresh scripted model per run (replies from the start), others loaded once."""

    def __init__(self, specs: list[str], resolve: Callable[[str], Model] | None = None):
        from pyharness.evals.servers import plain_model

        self.resolve = resolve or plain_model
        self.loaded = {spec: self.resolve(spec) for spec in specs if not spec.startswith("scripted:")}
        for spec in specs:
            if spec.startswith("scripted:") and not Path(spec.partition(":")[2]).is_dir():
                self.resolve(spec)  # a missing or malformed replies file is reported before any run

    def for_run(self, spec: str, task_id: str) -> Model:
        """The model for one run; `scripted:DIR` reads DIR/<task id>.json."""
        if spec in self.loaded:
            return self.loaded[spec]
        folder = Path(spec.partition(":")[2])
        if folder.is_dir():
            path = folder / f"{task_id}.json"
            if not path.is_file():
                raise ModelError(f"no scripted replies for task {task_id} in {folder} (expected {path.name})")
            return self.resolve(f"scripted:{path}")
        return self.resolve(spec)

    @property
    def in_process(self) -> bool:
        """True when a model runs inside this process (llama.cpp): one thread only."""
        return any(spec.startswith("llamacpp") for spec in self.loaded)


def pending(plan: EvalPlan, results: Path, retry_errors: bool = False) -> list[RunSpec]:
    """The planned runs that results.jsonl does not hold yet (with retry_errors, also those that errored)."""
    latest = {record_key(r): r for r in read_results(results)[0]}
    done = {k for k, r in latest.items() if not (retry_errors and r.get("outcome") == "error")}
    return [run for run in interleave(plan) if run.key not in done]


def plan_records(plan: EvalPlan, records: list[dict]) -> list[dict]:
    """The records that belong to this plan's tasks, models, configurations and repeats."""
    keys = {run.key for run in interleave(plan)}
    return [r for r in records if record_key(r) in keys]


def run_eval(plan: EvalPlan, out: Path, models: Models, *, workers: int = 1, retry_errors: bool = False,
             on_result: Callable[[dict, int, int], None] = lambda record, done, total: None) -> list[dict]:
    """Run every planned run not yet in OUT/results.jsonl; each record is appended as soon as its run ends."""
    results = ResultsFile(out)
    todo = pending(plan, results.path, retry_errors)
    by_task: dict[str, list[RunSpec]] = {}
    for run in todo:
        by_task.setdefault(run.task.id, []).append(run)
    lock, new, stop = threading.Lock(), [], threading.Event()

    def work(runs: list[RunSpec]) -> None:
        for run in runs:
            if stop.is_set():
                return
            output = perform(plan, run, models)
            with lock:
                new.append(results.add(output))
                on_result(new[-1], len(new), len(todo))

    if workers <= 1:
        for runs in by_task.values():
            work(runs)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(work, runs) for runs in by_task.values()]
            try:
                for future in futures:
                    future.result()
            except BaseException:
                stop.set()  # Ctrl-C or a failure: runs under way finish and are recorded, no new one starts
                pool.shutdown(cancel_futures=True)
                raise
    return new


def perform(plan: EvalPlan, run: RunSpec, models: ModelSource) -> RunOutput:
    """Set up a fresh repo for one run, run the job, score it independently; the record and the transcript."""
    started = time.monotonic()
    server = ""
    with tempfile.TemporaryDirectory(prefix="ph-eval-") as tmp:
        repo = Path(tmp) / "repo"
        task = run.task
        tests = None
        if isinstance(task, StdoutTask):
            make_stdout_repo(repo, task)
            mode, message, write_path = "stdout", task_message(task), "main.py"
        elif isinstance(task, (MutantJob, BugJob)):
            task.make_repo(repo)
            mode, message, write_path, tests = "fix", task.task, None, task.tests
        else:
            from pyharness.evals.demo import make_repo

            make_repo(repo, task.job, root=task.root, source=task.source)
            mode, message, write_path = task.job["mode"], task.job["task"], None
        try:
            model = models.for_run(run.model, task.id)
            server = served_by(model)
            chosen = sandbox.override(run.config.sandbox == "on") if run.config.sandbox else nullcontext()
            with chosen:
                result = _run_config(plan, run, model, repo, task, mode, message, write_path, tests)
        except ModelError as err:
            result = _errored(repo, str(err))
        except Exception as err:  # a fault in ph itself: recorded as this run's error, and the eval goes on
            result = _errored(repo, f"internal error: {type(err).__name__}: {err}")
        strict, lenient, note, left = _score(task, repo, result)
        kept = Path(result.transcript) if result.transcript else None
        transcript = kept.read_bytes() if kept is not None and kept.is_file() else b""
    record = run_record(plan, run, result, (strict, lenient, note), round(time.monotonic() - started, 2), server)
    if left is not None:
        record["left"] = {k: left[k] for k in ("failing", "before", "worse", "changed")}
    return RunOutput(record, transcript)


def run_record(plan: EvalPlan, run: RunSpec, result: RunResult, score: tuple[bool, bool, str], wall: float,
               server: str = "") -> dict:
    """A run's line of results.jsonl (its `transcript` is filled in by the writer)."""
    strict, lenient, note = score
    task = run.task
    timed_out = result.outcome == "stopped" and result.seconds >= plan.agent.max_seconds
    return {"suite": plan.suite, "task": task.id, "model": run.model, "config": run.config.name,
            "repeat": run.repeat, "order": run.order, "pass_strict": strict, "pass_lenient": lenient,
            "steps": result.steps, "attempts": result.attempts, "first_try": strict and result.first_pass == 1,
            "trials": result.trials, "prompt_tokens": result.prompt_tokens, "cached_tokens": result.cached_tokens,
            "completion_tokens": result.completion_tokens, "seconds": result.seconds, "wall_seconds": wall,
            "timed_out": timed_out, "outcome": result.outcome, "reason": result.reason, "note": note,
            "interventions": dict(sorted(result.interventions.items())), "transcript": "",
            "finished": datetime.now(UTC).isoformat(timespec="seconds"), "host": socket.gethostname(),
            "server": server,
            **({"project": task.project, "large": task.large} if isinstance(task, (MutantJob, BugJob)) else {})}


def given_up(plan: EvalPlan, run: RunSpec, reason: str) -> RunOutput:
    """The record of a run that never finished anywhere (its workers or servers kept dying): a model error, so
    that `--retry-errors` runs it again."""
    return RunOutput(run_record(plan, run, RunResult(Outcome.ERROR, reason), (False, False, reason), 0.0))


def served_by(model: Model) -> str:
    """The server a model talks to (an OpenAI-compatible base URL or an Ollama host); '' for other backends."""
    return str(getattr(model, "base_url", "") or getattr(model, "host", "") or "")


def _run_config(plan: EvalPlan, run: RunSpec, model: Model, repo: Path, task, mode: str, message: str,
                write_path: str | None, tests: list[str] | None):
    """One run of `task` in `repo` in the run's configuration (oneshot, or the loop with its harness and schedule)."""
    from pyharness.loop.session import run_job

    if run.config.protocol == "oneshot" and isinstance(task, StdoutTask):
        return run_oneshot(repo, task, model)
    python = plan.python or job_python(task)
    if run.config.protocol == "oneshot":
        return run_oneshot_job(repo, mode, message, model, tests, python=python.path if python else None)
    preset = PRESETS[run.config.schedule].get(mode)
    agent = replace(plan.agent, schedule=preset) if preset else plan.agent
    agent = replace(agent, protocol=run.config.protocol)  # text or json
    harness = HarnessConfig.parse_spec(run.config.harness)
    harness.layers.difference_update(run.config.without.split("+"))
    return run_job(repo, mode, message, model, tests=tests, harness=harness, config=agent,
                   default_write_path=write_path, test_timeout=plan.test_timeout, python=python)


def job_python(task) -> Interpreter | None:
    """A bug job's own interpreter (its project's venv, which holds the project's dependencies); None for others."""
    if not isinstance(task, BugJob) or task.python is None:
        return None
    from pyharness.workspace.interpreter import choose

    return choose(None, (task.python, f"the {task.project} venv of the bugs suite"))


def _score(task: Task, repo: Path, result: RunResult) -> tuple[bool, bool, str, dict | None]:
    """strict, lenient, note, and for a mutant or bug job what the run left (`MutantJob.left`: its tests run whatever
    the outcome, so a run that stopped on budget is still checked for leaving more failing tests than the mutant)."""
    if isinstance(task, (MutantJob, BugJob)):
        left = task.left(repo, task.test_hashes())
        ok = result.outcome == "done" and left["green"]
        return ok, ok, left["note"] if result.outcome == "done" else result.reason, left
    if isinstance(task, JobTask):
        from pyharness.evals.demo import check

        ok, note = check(task.job, repo, result, root=task.root, source=task.source)
        return ok, ok, note, None
    main = repo / "main.py"
    if not main.is_file():
        return False, False, "no main.py was written", None
    score = score_source(task, main.read_text(encoding="utf-8", errors="replace"), cwd=repo)
    return score.strict, score.lenient, score.note or f"all {score.cases} cases match", None


def _errored(repo: Path, reason: str) -> RunResult:
    """A RunResult for a run a model error cut short: the figures its transcript's end record holds."""
    from pyharness.loop.transcript import latest_runs, read_transcript

    runs = latest_runs(repo, 1)
    ends = [r for r in read_transcript(runs[0]) if r["event"] == "end"] if runs else []
    known = {k: v for k, v in (ends[-1] if ends else {}).items() if k in RunResult.__dataclass_fields__}
    return RunResult(**{**known, "outcome": Outcome.ERROR, "reason": reason})
