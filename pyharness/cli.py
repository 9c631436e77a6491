"""The `ph` command line: the only place that prints errors or exits. Heavy imports happen inside commands."""

from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperGroup

EXIT_CODES = ("Exit codes: 0 the run ended done (or the command did its job); 1 bad input or set-up "
              "(a malformed option, a missing repo, no model, a model server that failed); 2 the run ended "
              "without done (stopped by a budget, invalid, a demo job failed); 130 interrupted (Ctrl-C).")


@contextmanager
def _one_line_usage_errors():
    """A malformed command line is one `ph: ...` line and exit 1 (exit 2 means a run that did not end done)."""
    usage_error = next(k for k in typer.BadParameter.__mro__ if k.__name__ == "UsageError")
    try:
        yield
    except usage_error as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # bare `ph` or `ph model`: the help was shown
            raise typer.Exit(0) from None
        from pyharness.console import inert

        where = f" (see {err.ctx.command_path} -h)" if getattr(err, "ctx", None) is not None else ""
        typer.echo(f"ph: {inert(err.format_message())}{where}", err=True)
        raise typer.Exit(1) from None


class _Commands(TyperGroup):
    """ph's command group: usage errors of any command, sub-app included, go through `_one_line_usage_errors`."""

    def make_context(self, *args, **kwargs):
        with _one_line_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with _one_line_usage_errors():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_Commands,
    add_completion=True,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    help="A coding helper for small local models: a tight loop, named actions, no shell.",
    epilog='Example: ph ask "Which file defines the tax rate for books?" --repo demo/orders\n\n' + EXIT_CODES,
)
model_app = typer.Typer(no_args_is_help=True, help="Embedded model packs.")
app.add_typer(model_app, name="model")


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"ph (py-harness) {version('py-harness')}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """A coding helper for small local models: a tight loop, named actions, no shell."""

RepoOpt = Annotated[
    Path | None,
    typer.Option("--repo", help="The repo to work in (default: the top of the git repo that holds the current "
                 "folder, else the current folder)."),
]
JsonOpt = Annotated[
    bool, typer.Option("--json", help="Print one JSON object on stdout and nothing else there (the rest: stderr).")
]
ModelOpt = Annotated[
    str | None,
    typer.Option(
        "--model",
        "-m",
        help="ollama:NAME, llamacpp:PACK_OR_PATH, openai:MODEL@URL or scripted:PATH (default: PH_MODEL, "
        "the model in the repo's pyproject.toml tool.ph table, your config file, else Ollama's llama3.1:8b if it "
        "answers, else the embedded pack; see `ph config`).",
    ),
]
HarnessOpt = Annotated[str, typer.Option("--harness", help="on, or off for the thin-wrapper baseline.")]
LayersOpt = Annotated[str | None, typer.Option("--layers", help="Comma-separated harness layers to switch on.")]
StepsOpt = Annotated[int, typer.Option("--max-steps", min=1, help="Model turns before the run stops.")]
EscalateOpt = Annotated[
    str | None,
    typer.Option("--escalate-to", help="A second model for low-confidence turns, e.g. ollama:qwen2.5-coder:7b."),
]


def _positive(value: float) -> float:
    if value <= 0:
        raise typer.BadParameter(f"{value:g} is not more than 0")
    return value


SecondsOpt = Annotated[
    float, typer.Option("--max-seconds", callback=_positive, help="Wall-clock budget of the run, in seconds.")
]
TestTimeoutOpt = Annotated[
    float, typer.Option("--test-timeout", min=1, help="Seconds one test run may take before ph stops it.")
]
StreamOpt = Annotated[
    bool | None,
    typer.Option("--stream/--no-stream", help="Show the model's text as it is written (default: on a terminal)."),
]
QuietOpt = Annotated[bool, typer.Option("--quiet", "-q", help="Show only the end summary line and errors.")]
VerboseOpt = Annotated[bool, typer.Option("--verbose", "-v", help="Also show the harness's repairs, dimmed.")]
SearchOpt = Annotated[
    str | None,
    typer.Option("--search-schedule", help="The search layer's candidates in order, as kind@temperature "
                 "(kinds: plain, plan, repair, line), e.g. plain@0,plain@0.8,repair@0.5; its length caps the "
                 "candidates."),
]


def _agent_config(max_steps: int, max_seconds: float, schedule: str | None, json_command: str | None = None):
    """The run's budgets and search schedule; a malformed schedule is a one-line error."""
    from pyharness.agent import AgentConfig
    from pyharness.candidates import parse_schedule

    if schedule is None:
        return AgentConfig(max_steps=max_steps, max_seconds=max_seconds)
    try:
        parse_schedule(schedule)
    except ValueError as err:
        _fail(f"--search-schedule: {err}", json_command=json_command)
    return AgentConfig(max_steps=max_steps, max_seconds=max_seconds, search_schedule=schedule)


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


def _fail(message: str, code: int = 1, json_command: str | None = None, result=None) -> None:
    """One `ph: ...` line on stderr and exit; with --json (json_command set), the failure as the JSON object too."""
    from pyharness.console import inert

    typer.echo(f"ph: {inert(message)}", err=True)
    if json_command:
        from pyharness.jsonview import failure_object, write

        write(failure_object(json_command, message, code, result))
    raise typer.Exit(code)


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
        _fail("-q and -v ask for less and more at once: choose one", json_command=json_command)


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
        _fail(f"ph {mode}: the task is empty; say what to do, e.g. ph {mode} \"...\"", json_command=as_json)
    _quiet_or_verbose(quiet, verbose, as_json)
    agent_config = _agent_config(max_steps, max_seconds, schedule, as_json)
    with CtrlC():
        try:
            root = _repo(repo)
            settings = _settings(root, model=model, max_steps=max_steps, max_seconds=max_seconds, stream=stream,
                                 test_timeout=test_timeout)
            max_steps, max_seconds, stream, test_timeout = (
                settings[k] for k in ("max_steps", "max_seconds", "stream", "test_timeout"))
            agent_config = _agent_config(max_steps, max_seconds, schedule, as_json)
            config = HarnessConfig.parse_spec(harness, layers)
            chosen = _chosen_model(settings)
            second = resolve_model(escalate) if escalate else None
            for backend in (chosen, second):
                if hasattr(backend, "check"):
                    backend.check()  # a server that is not there, or lacks the model: said before anything is written
            with RunView(stream=stream, quiet=quiet, verbose=verbose) as view:  # its status line ends before errors
                result = run_job(root, mode, task, chosen, tests=tests, harness=config, config=agent_config,
                                 emit=view, escalate=second, test_timeout=test_timeout)
        except (ModelError, UserError, ValueError) as err:
            _fail(str(err), json_command=as_json)
            return
        except Interrupted as stop:
            _fail(_interrupted(stop.result), 130, json_command=as_json, result=stop.result)
            return
        except KeyboardInterrupt:
            _fail(_interrupted(None), 130, json_command=as_json)
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
        _fail(f"--only {', '.join(unknown)}: the demo jobs are ask, fix, add and run")
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
        _fail(str(err))
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


@model_app.command("list", epilog="Example: ph model list")
def model_list() -> None:
    """Show the known packs and whether each is present."""
    from pyharness.models.packs import PACKS, is_present, pack_path

    for pack in PACKS.values():
        state = "present" if is_present(pack) else "not pulled"
        typer.echo(f"{pack.name}\t{state}\t{pack.size / 1e9:.2f} GB\t{pack_path(pack)}\t{pack.description}")


@model_app.command("pull", epilog="Example: ph model pull qwen2.5-coder-1.5b")
def model_pull(pack: Annotated[str, typer.Argument(help="Pack name.")] = "qwen2.5-coder-1.5b") -> None:
    """Fetch a pack, verify its size and sha256, and store it in the user cache dir."""
    from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

    from pyharness.errors import ModelError
    from pyharness.models.packs import PACKS, pull

    if pack not in PACKS:
        _fail(f"unknown pack '{pack}': known packs are {', '.join(PACKS)}")
    try:
        with Progress(
            "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn()
        ) as progress:
            task = progress.add_task(f"pull {pack}", total=PACKS[pack].size)
            path = pull(PACKS[pack], progress=lambda done, total: progress.update(task, completed=done))
    except ModelError as err:
        _fail(str(err))
        return
    typer.echo(f"{pack}: verified, at {path}")


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
        _fail(str(err))


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
        _fail(str(err), json_command="log" if json_out else None)
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
                _fail(f"no runs recorded in {root} yet: ph ask, fix, add or run records one")
            path = latest[0]
    except UserError as err:
        _fail(str(err))
        return
    if not path.is_file():
        _fail(f"no transcript {path}: see `ph log` for the runs of a repo")
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
        _fail(str(err))
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


@app.command("eval", epilog="Example: ph eval jobs --model ollama:qwen2.5-coder:7b --configs harness=on,off --repeat 3")
def eval_(
    suite: Annotated[
        str, typer.Argument(help="stdout, humaneval, jobs, mutants (mutants:dev, mutants:all), or a task folder.")
    ],
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Glob on task ids (commas for several), or @FILE listing ids.")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="Model spec; repeat to compare models. scripted:DIR reads DIR/<task id>.json."
        ),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs of each task per configuration.")] = 1,
    configs: Annotated[
        list[str] | None,
        typer.Option(
            "--configs",
            help="Configurations, e.g. harness=on,off (axes: harness; protocol text, oneshot = one reply, no harness).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Tasks run in parallel threads.")] = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Results folder (default out/eval-SUITE).")] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Sanity-check every task first (reference passes, "
            "empty fails); failing tasks are listed and left out.",
        ),
    ] = False,
    max_steps: StepsOpt = 20,
    max_seconds: Annotated[
        float, typer.Option("--max-seconds", callback=_positive, help="Wall-clock budget per run, in seconds.")
    ] = 900.0,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Run again the runs that ended in a model error.")
    ] = False,
    search_schedule: SearchOpt = None,
    from_path: Annotated[
        Path | None,
        typer.Option("--from", help="mutants only: build the jobs from a local project with a tests folder."),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Run an eval suite: each task x model x configuration x repeat, interleaved, resumable, with a report."""
    from concurrent.futures import ThreadPoolExecutor

    from rich.console import Console

    from pyharness.errors import ModelError, UserError
    from pyharness.evalreport import intervention_lines, latest, read_results, summary_table, write_reports
    from pyharness.evals import EvalPlan, Models, parse_configs, pending, plan_records, run_eval
    from pyharness.evalsuites import check_task, load_suite, select
    from pyharness.evalview import EvalView, show_errors
    from pyharness.mutants import mutant_counts

    console = Console(soft_wrap=True, highlight=False, stderr=json_out)  # --json: stdout holds only the object
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    as_json = "eval" if json_out else None
    folder = out
    try:
        plan_configs = parse_configs(configs)
        if from_path is not None:
            from pyharness.evalsuites import Suite
            from pyharness.mutants import local_jobs

            if suite != "mutants":
                raise UserError("--from goes with the mutants suite: ph eval mutants --from PATH")
            loaded = Suite(f"mutants-{Path(from_path).resolve().name}",
                           local_jobs(from_path, progress=lambda text: err.print(text, markup=False)))
        else:
            loaded = load_suite(suite)
        for problem in loaded.problems:
            err.print(f"[yellow]skipped[/yellow] {problem}")
        chosen = select(loaded.tasks, tasks)
        if check:
            with ThreadPoolExecutor(max_workers=4) as pool:
                verdicts = list(pool.map(check_task, chosen))
            bad = {v.task for v in verdicts if not v.ok}
            for verdict in verdicts:
                if not verdict.ok:
                    err.print(f"[red]excluded[/red] {verdict.task}: {verdict.note}")
            console.print(
                f"check: {len(verdicts) - len(bad)}/{len(verdicts)} tasks sound"
                + (f", {len(bad)} excluded" if bad else "")
            )
            chosen = [t for t in chosen if t.id not in bad]
            if loaded.name.startswith("mutants"):
                for line in mutant_counts(chosen):
                    console.print(line, markup=False)
            if not model:
                code = 1 if bad or loaded.problems else 0
                if json_out:
                    from pyharness.jsonview import write

                    write({"command": "eval", "suite": loaded.name, "exit_code": code, "checked": len(verdicts),
                           "excluded": {v.task: v.note for v in verdicts if not v.ok}, "problems": loaded.problems})
                raise typer.Exit(code)
        if not model:
            raise UserError("name a model: --model llamacpp:qwen2.5-coder-1.5b, ollama:NAME or scripted:PATH")
        if not chosen:
            raise UserError("no tasks left to run")
        models = Models(model)
        if models.in_process and workers > 1:
            err.print("note: a llama.cpp model runs in this process and cannot serve two threads: using 1 worker")
            workers = 1
        folder = out or Path("out") / f"eval-{loaded.name}"
        plan = EvalPlan(
            loaded.name, chosen, model, plan_configs, repeat, _agent_config(max_steps, max_seconds, search_schedule)
        )
        todo = len(pending(plan, folder / "results.jsonl", retry_errors))
        console.print(
            f"eval {loaded.name}: {len(chosen)} tasks x {len(model)} model(s) x {len(plan_configs)} "
            f"config(s) x {repeat} repeat(s) -> {folder}"
            + (f" (resuming: {todo} runs left)" if (folder / "results.jsonl").exists() else "")
        )
        with EvalView(todo, with_model=len(model) > 1, console=err) as view:
            run_eval(plan, folder, models, workers=workers, retry_errors=retry_errors, on_result=view)
    except (ModelError, UserError, ValueError) as error:
        _fail(str(error), json_command=as_json)
        return
    except KeyboardInterrupt:
        _fail(
            "interrupted"
            + (f"; finished runs are in {folder / 'results.jsonl'}: run the same command to resume" if folder else ""),
            130,
            json_command=as_json,
        )
        return
    records, problems = read_results(folder / "results.jsonl")
    for problem in problems:
        err.print(f"[yellow]note[/yellow] {problem}")
    title = f"ph eval {loaded.name}"
    summaries, chart = write_reports(folder, plan_records(plan, records), title, notes=loaded.problems)
    console.print(summary_table(summaries, title))
    for line in intervention_lines(summaries):
        console.print(f"interventions {line}")
    show_errors(err, latest(plan_records(plan, records)))
    console.print(f"results: {folder / 'results.jsonl'}\nsummary: {folder / 'summary.md'}\n{chart}")
    if json_out:
        from pyharness.jsonview import summaries_object, write

        write(summaries_object(loaded.name, summaries, folder))


if __name__ == "__main__":
    app()
