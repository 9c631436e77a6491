"""The `ph` command line: the only place (with the cli_* modules) that prints errors or exits. Heavy imports happen
inside commands.

Here: the run commands (ask, fix, add, run, demo) and those that look at runs or the set-up. Elsewhere: the app and
`fail` (cli_app), the shared options (cli_options), `ph eval` (cli_eval), `ph model` (cli_model)."""

from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli_app import app, fail
from pyharness.cli_options import (
    EscalateOpt,
    HarnessOpt,
    JsonOpt,
    LayersOpt,
    ModelOpt,
    QuietOpt,
    RepoOpt,
    SearchOpt,
    SecondsOpt,
    StepsOpt,
    StreamOpt,
    TestTimeoutOpt,
    VerboseOpt,
    agent_config,
)


def _settings(root: Path | None, **values):
    """The run's settings: a flag typed on the command line wins, else the config files, else the command's default
    (pyharness.config); notes about ignored repo settings go to stderr."""
    from pyharness.config import effective
    from pyharness.console import inert

    try:  # typer vendors click (typer._click) since 0.2x; before, it ran on click itself
        from typer._click.globals import get_current_context
    except ImportError:
        from click import get_current_context
    ctx = get_current_context(silent=True)
    sources = {k: ctx.get_parameter_source(k) if ctx is not None else None for k in values}
    typed = {k for k, source in sources.items() if source is not None and source.name not in ("DEFAULT", "DEFAULT_MAP")}
    settings = effective({k: values[k] for k in typed}, {k: v for k, v in values.items() if k not in typed}, root)
    for note in settings.notes:
        typer.echo(f"ph: note: {inert(note)}", err=True)
    return settings


def _chosen_model(settings):
    """The model the settings name (or the automatic choice), saying on stderr which and why unless it was typed."""
    from pyharness.config import choose_model
    from pyharness.console import inert

    model, line = choose_model(settings.values["model"])
    if line:
        typer.echo(inert(line), err=True)
    return model


def _repo(repo: Path | None) -> Path:
    """The repo to work in: --repo as given (a UserError when it is missing or a file); without --repo, the top of
    the git work tree that holds the current folder (said on stderr when that is not the current folder)."""
    from pyharness.gitops import toplevel
    from pyharness.session import check_repo

    path = check_repo(repo if repo is not None else Path("."))
    top = toplevel(path) if repo is None else None
    if top is None or top.resolve() == path:
        return path
    typer.echo(f"ph: working in {top.resolve()}, the top of the git repo that holds the current folder", err=True)
    return top.resolve()


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
) -> None:
    from pyharness.console import RunView, inert
    from pyharness.errors import Interrupted, ModelError, UserError
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.interrupts import CtrlC
    from pyharness.models.resolve import resolve_model
    from pyharness.session import run_job

    as_json = mode if json_out else None
    if mode != "fix" and not task.strip():
        fail(f"ph {mode}: the task is empty; say what to do, e.g. ph {mode} \"...\"", json_command=as_json)
    _quiet_or_verbose(quiet, verbose, as_json)
    run_config = agent_config(max_steps, max_seconds, schedule, as_json)
    with CtrlC():
        try:
            root = _repo(repo)
            settings = _settings(root, model=model, max_steps=max_steps, max_seconds=max_seconds, stream=stream,
                                 test_timeout=test_timeout)
            max_steps, max_seconds, stream, test_timeout = (
                settings[k] for k in ("max_steps", "max_seconds", "stream", "test_timeout"))
            run_config = agent_config(max_steps, max_seconds, schedule, as_json)
            config = HarnessConfig.parse_spec(harness, layers)
            chosen = _chosen_model(settings)
            second = resolve_model(escalate) if escalate else None
            for backend in (chosen, second):
                if hasattr(backend, "check"):
                    backend.check()  # a server that is not there, or lacks the model: said before anything is written
            with RunView(stream=stream, quiet=quiet, verbose=verbose) as view:  # its status line ends before errors
                result = run_job(root, mode, task, chosen, tests=tests, harness=config, config=run_config,
                                 emit=view, escalate=second, test_timeout=test_timeout)
        except (ModelError, UserError, ValueError) as err:
            fail(str(err), json_command=as_json)
            return
        except Interrupted as stop:
            fail(_interrupted(stop.result), 130, json_command=as_json, result=stop.result)
            return
        except KeyboardInterrupt:
            fail(_interrupted(None), 130, json_command=as_json)
            return
    code = 0 if result.outcome == "done" else 2
    if json_out:
        from pyharness.jsonview import run_object, write

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
         quiet=quiet, verbose=verbose)


@app.command(epilog="Example: ph fix tests/test_pricing.py --repo path/to/repo --max-steps 10")
def fix(
    tests: Annotated[list[str] | None, typer.Argument(help="Test files or node ids (default: all).")] = None,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    search_schedule: SearchOpt = None,
    test_timeout: TestTimeoutOpt = 120.0,
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
        schedule=search_schedule,
        test_timeout=test_timeout,
        json_out=json_out,
        quiet=quiet,
        verbose=verbose,
    )


@app.command(epilog='Example: ph add "a function shipping_cost(weight_kg) in orders/shipping.py" --repo path/to/repo')
def add(
    feature: str,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    search_schedule: SearchOpt = None,
    test_timeout: TestTimeoutOpt = 120.0,
    json_out: JsonOpt = False,
) -> None:
    """Add a feature together with a test for it."""
    _job("add", feature, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds,
         schedule=search_schedule, test_timeout=test_timeout, json_out=json_out,
         quiet=quiet, verbose=verbose)


@app.command(epilog='Example: ph run "change the food tax rate to 0.08" --repo path/to/repo')
def run(
    task: str,
    repo: RepoOpt = None,
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    test_timeout: TestTimeoutOpt = 120.0,
    json_out: JsonOpt = False,
) -> None:
    """Any other change to the repo; done when the model says so and the suite is green."""
    _job("run", task, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds,
         test_timeout=test_timeout, json_out=json_out,
         quiet=quiet, verbose=verbose)


@app.command(epilog="Example: ph demo --only ask --only fix --keep /tmp/ph-demo")
def demo(
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    max_steps: StepsOpt = 20,
    stream: StreamOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only these jobs (ask/fix/add/run).")] = None,
    keep: Annotated[Path | None, typer.Option("--keep", help="Keep the demo repos in this folder.")] = None,
) -> None:
    """Run the four first-run jobs on a fresh copy of demo/orders and print a table."""
    from rich.console import Console

    from pyharness.agent import AgentConfig
    from pyharness.console import RunView, jobs_table, safe
    from pyharness.demo import run_demo
    from pyharness.errors import ModelError, UserError
    from pyharness.harness.pipeline import HarnessConfig

    console = Console()
    unknown = sorted(set(only or []) - {"ask", "fix", "add", "run"})
    if unknown:
        fail(f"--only {', '.join(unknown)}: the demo jobs are ask, fix, add and run")
    _quiet_or_verbose(quiet, verbose)
    try:
        settings = _settings(None, model=model, max_steps=max_steps, stream=stream)
        max_steps, stream = settings["max_steps"], settings["stream"]
        chosen = _chosen_model(settings)
        if not quiet:
            console.print(f"demo with model [bold]{safe(chosen.name)}[/bold]")
        with RunView(stream=stream, quiet=quiet, verbose=verbose) as view:
            outcomes = run_demo(
                chosen,
                harness=HarnessConfig.parse_spec(harness),
                config=AgentConfig(max_steps=max_steps),
                only=only,
                emit=view,
                keep=keep,
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


@app.command(epilog="Example: ph undo --repo path/to/repo")
def undo(
    repo: RepoOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Undo even files changed since the run.")] = False,
) -> None:
    """Put back the files the last run changed, exactly as they were before it."""
    from pyharness.errors import UserError
    from pyharness.undo import undo_last

    try:
        for line in undo_last(_repo(repo), force=force):
            typer.echo(line)
    except UserError as err:
        fail(str(err))


@app.command(epilog="Example: ph log --limit 5 --json")
def log(
    repo: RepoOpt = None,
    limit: Annotated[int, typer.Option(min=1, help="How many runs.")] = 10,
    json_out: JsonOpt = False,
) -> None:
    """List the latest runs in the repo (newest first): outcome, steps, tokens, seconds."""
    from pyharness.console import inert
    from pyharness.errors import UserError
    from pyharness.jsonview import run_entry, write
    from pyharness.transcript import latest_runs, read_transcript

    try:
        root = _repo(repo)
        runs = latest_runs(root, limit)
    except UserError as err:
        fail(str(err), json_command="log" if json_out else None)
        return
    entries = [run_entry(path, read_transcript(path)) for path in runs]
    if json_out:
        write({"command": "log", "repo": str(root), "runs": entries})
        return
    if not entries:
        typer.echo(f"no runs recorded in {inert(root)} yet", err=True)
    for e in entries:
        typer.echo(inert(f"{e['run']}\t{e['outcome']}\t{e['steps'] if e['steps'] is not None else '?'} steps"
                         f"\t{e['tokens']} tokens\t{e['seconds'] if e['seconds'] is not None else '?'} s"
                         f"\t{e['reason'][:80]}"))


@app.command(epilog="Example: ph show   (the latest run; ph log lists the others)")
def show(
    run_id: Annotated[
        str | None, typer.Argument(help="A run name from `ph log`, or a transcript path (default: the latest run).")
    ] = None,
    repo: RepoOpt = None,
) -> None:
    """Show one run turn by turn: the model's reply, the action, the harness's fixes, the observation."""
    from pyharness.console import inert
    from pyharness.errors import UserError
    from pyharness.transcript import latest_runs, read_transcript, runs_dir

    try:
        if run_id is not None and run_id.endswith(".jsonl"):
            path = Path(run_id)
        else:
            root = _repo(repo)
            latest = latest_runs(root, 1) if run_id is None else [runs_dir(root) / f"{run_id}.jsonl"]
            if not latest:
                fail(f"no runs recorded in {root} yet: ph ask, fix, add or run records one")
            path = latest[0]
    except UserError as err:
        fail(str(err))
        return
    if not path.is_file():
        fail(f"no transcript {path}: see `ph log` for the runs of a repo")
    for record in read_transcript(path):
        if record["event"] == "start":
            typer.echo(inert(f"# {record['mode']} with {record['model']}: {record['task']}"))
        elif record["event"] == "turn":
            fixes = ", ".join(i["kind"] for i in record["interventions"]) or "none"
            typer.echo(inert(
                f"\n## step {record['step']} ({record['seconds']} s, {record['prompt_tokens']} prompt tokens, "
                f"{record['cached_tokens']} cached)\n{record['reply']}\n-- action: {record['action']}; "
                f"harness: {fixes}\n{record['observation']}"
            ))
        elif record["event"] == "end":
            typer.echo(inert(f"\n# {record['outcome']}: {record['reason']}"))


@app.command("config", epilog="Example: ph config --repo path/to/repo")
def config_(repo: RepoOpt = None, model: ModelOpt = None) -> None:
    """Show each setting's effective value and where it comes from: flag, PH_MODEL, the repo's pyproject.toml, your
    config file, or the default."""
    from pyharness.config import describe_settings
    from pyharness.console import inert
    from pyharness.errors import UserError

    try:
        root = _repo(repo)
        settings = _settings(root, model=model, max_steps=None, max_seconds=900.0, test_timeout=120.0, stream=False)
    except UserError as err:
        fail(str(err))
        return
    for line in describe_settings(settings):
        typer.echo(inert(line))


@app.command(epilog="Example: ph doctor --json")
def doctor(json_out: JsonOpt = False) -> None:
    """Check the set-up (Python, pytest, llama-cpp-python, the embedded pack, Ollama); exit 1 if no model can run."""
    from pyharness.doctor import diagnose

    checks, problem = diagnose()
    if json_out:
        from pyharness.jsonview import write

        write({"command": "doctor", "ok": not problem, "exit_code": 1 if problem else 0, "reason": problem,
               "checks": [vars(c) for c in checks]})
    else:
        for c in checks:
            typer.echo(f"{'ok ' if c.ok else 'no '} {c.name:<28} {c.note}")
    if problem:
        typer.echo(f"ph: {problem}", err=True)
        raise typer.Exit(1)


# Imported last, for what importing them does: each adds its command to `app`, and `ph --help` lists commands in the
# order they were added.
from pyharness import cli_eval, cli_model  # noqa: E402, F401

if __name__ == "__main__":
    app()
