"""The `ph` command line: the only wing that prints errors or exits. Heavy imports happen inside commands.

Here: the run commands (ask, fix, add, run, demo). Elsewhere in `pyharness/cli/`: the app and `fail` (app.py), the
shared options and the repo and settings they resolve to (options.py, config.py), undo/log/show/config/doctor
(history.py, doctor.py), `ph eval` (evaluate.py, evalview.py), `ph model` (model.py), `ph export` and `ph distill`
(export.py), the live view and the run summary (console.py, recap.py) and `--json` (jsonview.py)."""

import errno
from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli.app import app, fail
from pyharness.cli.options import (
    EscalateOpt,
    HarnessOpt,
    JsonOpt,
    LayersOpt,
    ModelOpt,
    ProtocolOpt,
    PythonOpt,
    QuietOpt,
    RepoOpt,
    SandboxOpt,
    ScheduleOpt,
    SecondsOpt,
    StepsOpt,
    StreamOpt,
    TestTimeoutOpt,
    VerboseOpt,
    agent_config,
    repo_root,
    settings_for,
    use_sandbox,
)


def _chosen_model(settings, quiet: bool = False):
    """The model the settings name (or the automatic choice), saying on stderr which and why unless typed or -q."""
    from pyharness.cli.config import choose_model
    from pyharness.cli.console import inert

    model, line = choose_model(settings.values["model"])
    if line and not quiet:
        typer.echo(inert(line), err=True)
    return model


def _chosen_python(root: Path | None, settings, quiet: bool = False):
    """The interpreter that runs the repo's code, said on stderr (versions and why) unless it was typed or -q."""
    from pyharness.cli.config import choose_python
    from pyharness.cli.console import inert

    setting = settings.values["python"]
    chosen = choose_python(root, setting)
    if setting.source != "flag" and not quiet:
        typer.echo(inert(chosen.describe()), err=True)
    return chosen


def _quiet_or_verbose(quiet: bool, verbose: bool, json_command: str | None = None) -> None:
    """-q and -v (the shared options of the run commands) cannot both be given."""
    if quiet and verbose:
        fail("-q and -v ask for less and more at once: choose one", json_command=json_command)


def _interrupted(result) -> str:
    """What a Ctrl-C left behind, in one line."""
    changed = list(getattr(result, "changed", None) or [])
    if not changed:
        return "interrupted, no changes"
    return f"interrupted after changing {len(changed)} file(s) ({', '.join(changed[:5])}): `ph undo` puts them back"


def _job(
    mode: str,
    task: str,
    repo: Path,
    model: str | None,
    harness: str,
    layers: str | None,
    max_steps: int,
    stream: bool | None,
    tests: list[str] | None = None,
    escalate: str | None = None,
    max_seconds: float = 900.0,
    schedule: str | None = None,
    test_timeout: float = 120.0,
    json_out: bool = False,
    quiet: bool = False,
    verbose: bool = False,
    protocol: str = "text",
    sandbox: bool = True,
    python: str | None = None,
) -> None:
    from pyharness.cli.console import RunView, inert
    from pyharness.errors import ModelError, UserError
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.loop.session import run_job
    from pyharness.models.resolve import resolve_model
    from pyharness.runstate import Interrupted
    from pyharness.workspace.interrupts import CtrlC

    as_json = mode if json_out else None
    if mode != "fix" and not task.strip():
        fail(f"ph {mode}: the task is empty; say what to do, e.g. ph {mode} \"...\"", json_command=as_json)
    _quiet_or_verbose(quiet, verbose, as_json)
    if mode != "ask":  # ask runs no code
        use_sandbox(sandbox, as_json)
    run_config = agent_config(max_steps, max_seconds, schedule, as_json, protocol)
    with CtrlC():
        try:
            root = repo_root(repo)
            settings = settings_for(root, model=model, max_steps=max_steps, max_seconds=max_seconds, stream=stream,
                                    test_timeout=test_timeout, python=python)
            max_steps, max_seconds, stream, test_timeout = (
                settings[k] for k in ("max_steps", "max_seconds", "stream", "test_timeout"))
            run_config = agent_config(max_steps, max_seconds, schedule, as_json, protocol)
            config = HarnessConfig.parse_spec(harness, layers)
            interpreter = _chosen_python(root, settings, quiet) if mode != "ask" else None  # ask runs no code
            chosen = _chosen_model(settings, quiet)
            second = resolve_model(escalate) if escalate else None
            for backend in (chosen, second):
                if hasattr(backend, "check"):
                    backend.check()  # a server that is not there, or lacks the model: said before anything is written
            with RunView(stream=stream, quiet=quiet, verbose=verbose) as view:  # its status line ends before errors
                result = run_job(root, mode, task, chosen, tests=tests, harness=config, config=run_config,
                                 emit=view, escalate=second, test_timeout=test_timeout, python=interpreter)
        except (ModelError, UserError, ValueError) as err:
            fail(str(err), json_command=as_json)
            return
        except OSError as err:
            if err.errno not in (errno.ENOSPC, errno.EDQUOT):
                raise
            where = f" ({err.filename})" if err.filename else ""
            fail(f"the disk is full{where}: the run stopped; files ph wrote are whole (written to a temp file, then "
                 "renamed), and `ph undo` puts back what it changed; free some space and run it again",
                 json_command=as_json)
            return
        except Interrupted as stop:
            fail(_interrupted(stop.result), 130, json_command=as_json, result=stop.result)
            return
        except KeyboardInterrupt:
            fail(_interrupted(None), 130, json_command=as_json)
            return
    code = 0 if result.outcome == "done" else 2
    if json_out:
        from pyharness.cli.jsonview import run_object, write

        write(run_object(mode, result, code))
    elif mode == "ask" and result.answer:
        typer.echo(inert(result.answer))
    if code:
        raise typer.Exit(code)


@app.command(epilog='Example: ph ask "Where is the tax rate for books set?" --repo demo/orders')
def ask(
    question: str,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    protocol: ProtocolOpt = "text",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 12,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    json_out: JsonOpt = False,
) -> None:
    """Answer a question about the repo, citing path:line; the cited line must hold what the answer says."""
    _job("ask", question, repo, model, harness, layers, max_steps, stream, escalate=escalate_to,
         max_seconds=max_seconds, json_out=json_out,
         quiet=quiet, verbose=verbose, protocol=protocol)


@app.command(epilog="Example: ph fix tests/test_pricing.py --repo path/to/repo --max-steps 10")
def fix(
    tests: Annotated[list[str] | None, typer.Argument(help="Test files or node ids (default: all).")] = None,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    protocol: ProtocolOpt = "text",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    schedule: ScheduleOpt = None,
    test_timeout: TestTimeoutOpt = 120.0,
    sandbox: SandboxOpt = True,
    python: PythonOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run the tests; if any fail, repair the code until they pass.

    Running the tests runs the repository's code (without your secret environment variables): trust the repo first.
    """
    _job(
        "fix",
        "",
        repo,
        model,
        harness,
        layers,
        max_steps,
        stream,
        tests=tests,
        escalate=escalate_to,
        max_seconds=max_seconds,
        schedule=schedule,
        test_timeout=test_timeout,
        json_out=json_out,
        quiet=quiet,
        verbose=verbose,
        protocol=protocol,
        sandbox=sandbox,
        python=python,
    )


@app.command(epilog='Example: ph add "a function shipping_cost(weight_kg) in orders/shipping.py" --repo path/to/repo')
def add(
    feature: str,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    protocol: ProtocolOpt = "text",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    schedule: ScheduleOpt = None,
    test_timeout: TestTimeoutOpt = 120.0,
    sandbox: SandboxOpt = True,
    python: PythonOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Add a feature together with a test for it."""
    _job("add", feature, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds,
         schedule=schedule, test_timeout=test_timeout, json_out=json_out,
         quiet=quiet, verbose=verbose, protocol=protocol, sandbox=sandbox, python=python)


@app.command(epilog='Example: ph run "change the food tax rate to 0.08" --repo path/to/repo')
def run(
    task: str,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    protocol: ProtocolOpt = "text",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    test_timeout: TestTimeoutOpt = 120.0,
    sandbox: SandboxOpt = True,
    python: PythonOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Any other change to the repo; done when the model says so and the suite is green."""
    _job("run", task, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds,
         test_timeout=test_timeout, json_out=json_out,
         quiet=quiet, verbose=verbose, protocol=protocol, sandbox=sandbox, python=python)


@app.command(epilog="Example: ph demo --only ask --only fix --keep /tmp/ph-demo")
def demo(
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    protocol: ProtocolOpt = "text",
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    sandbox: SandboxOpt = True,
    python: PythonOpt = None,
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only these jobs (ask/fix/add/run).")] = None,
    keep: Annotated[Path | None, typer.Option("--keep", help="Keep the demo repos in this folder.")] = None,
) -> None:
    """Run the four first-run jobs on a fresh copy of demo/orders and print a table."""
    from rich.console import Console

    from pyharness.cli.console import RunView, jobs_table, safe
    from pyharness.errors import ModelError, UserError
    from pyharness.evals.demo import run_demo
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.loop.agent import AgentConfig

    console = Console()
    unknown = sorted(set(only or []) - {"ask", "fix", "add", "run"})
    if unknown:
        fail(f"--only {', '.join(unknown)}: the demo jobs are ask, fix, add and run")
    _quiet_or_verbose(quiet, verbose)
    use_sandbox(sandbox)
    try:
        settings = settings_for(None, model=model, max_steps=max_steps, stream=stream, python=python)
        max_steps, stream = settings["max_steps"], settings["stream"]
        interpreter = _chosen_python(None, settings, quiet)
        chosen = _chosen_model(settings, quiet)
        if not quiet:
            console.print(f"demo with model [bold]{safe(chosen.name)}[/bold]")
        with RunView(stream=stream, quiet=quiet, verbose=verbose) as view:
            outcomes = run_demo(
                chosen,
                harness=HarnessConfig.parse_spec(harness),
                config=AgentConfig(max_steps=max_steps, protocol=protocol),
                only=only,
                emit=view,
                keep=keep,
                python=interpreter,
                announce=lambda text: quiet or console.print(f"\n[bold]{safe(text)}[/bold]"),
            )
    except (ModelError, UserError, ValueError) as err:
        fail(str(err))
        return
    rows = [
        {
            "job": o.name,
            "ok": o.ok,
            "steps": o.result.steps,
            "seconds": o.result.seconds,
            "note": o.note,
            "tokens": o.result.prompt_tokens + o.result.completion_tokens,
        }
        for o in outcomes
    ]
    console.print(jobs_table(rows, title=f"ph demo — {chosen.name}"))
    console.print(f"demo: {sum(o.ok for o in outcomes)}/{len(outcomes)} jobs succeeded")
    if not all(o.ok for o in outcomes):
        raise typer.Exit(2)  # like a run that did not end done


# Imported last, for what importing them does: each adds its command to `app`, and `ph --help` lists commands in the
# order they were added.
from pyharness.cli import evaluate as _evaluate  # noqa: E402, F401
from pyharness.cli import export as _export  # noqa: E402, F401
from pyharness.cli import history as _history  # noqa: E402, F401  (undo, log, show, config, doctor)
from pyharness.cli import model as _model  # noqa: E402, F401
