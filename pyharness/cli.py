"""The `ph` command line: the only place that prints errors or exits. Heavy imports happen inside commands."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    help="A coding helper for small local models: a tight loop, named actions, no shell.",
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

RepoOpt = Annotated[Path, typer.Option("--repo", help="The repo to work in.")]
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
SecondsOpt = Annotated[float, typer.Option("--max-seconds", help="Wall-clock budget of the run.")]
TestTimeoutOpt = Annotated[
    float, typer.Option("--test-timeout", min=1, help="Seconds one test run may take before ph stops it.")
]
StreamOpt = Annotated[bool, typer.Option("--stream/--no-stream", help="Show the model's text as it is written.")]
SearchOpt = Annotated[
    str | None,
    typer.Option("--search-schedule", help="The search layer's candidates in order, as kind@temperature "
                 "(kinds: plain, plan, repair, line), e.g. plain@0,plain@0.8,repair@0.5; its length caps the "
                 "candidates."),
]


def _agent_config(max_steps: int, max_seconds: float, schedule: str | None):
    """The run's budgets and search schedule; a malformed schedule is a one-line error."""
    from pyharness.agent import AgentConfig
    from pyharness.candidates import parse_schedule

    if schedule is None:
        return AgentConfig(max_steps=max_steps, max_seconds=max_seconds)
    try:
        parse_schedule(schedule)
    except ValueError as err:
        _fail(f"--search-schedule: {err}")
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


def _fail(message: str, code: int = 1) -> None:
    from pyharness.console import inert

    typer.echo(f"ph: {inert(message)}", err=True)
    raise typer.Exit(code)


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
    stream: bool,
    tests: list[str] | None = None,
    escalate: str | None = None,
    max_seconds: float = 900.0,
    schedule: str | None = None,
    test_timeout: float = 120.0,
) -> None:
    from pyharness.console import RunView, inert
    from pyharness.errors import Interrupted, ModelError, UserError
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.interrupts import CtrlC
    from pyharness.models.resolve import resolve_model
    from pyharness.session import check_repo, run_job

    if mode != "fix" and not task.strip():
        _fail(f"ph {mode}: the task is empty; say what to do, e.g. ph {mode} \"...\"")
    with CtrlC():
        try:
            root = check_repo(repo)
            settings = _settings(root, model=model, max_steps=max_steps, max_seconds=max_seconds, stream=stream,
                                 test_timeout=test_timeout)
            max_steps, max_seconds, stream, test_timeout = (
                settings[k] for k in ("max_steps", "max_seconds", "stream", "test_timeout"))
            config = HarnessConfig.parse_spec(harness, layers)
            chosen = _chosen_model(settings)
            second = resolve_model(escalate) if escalate else None
            for backend in (chosen, second):
                if hasattr(backend, "check"):
                    backend.check()  # a server that is not there, or lacks the model: said before anything is written
            result = run_job(
                root,
                mode,
                task,
                chosen,
                tests=tests,
                harness=config,
                config=_agent_config(max_steps, max_seconds, schedule),
                emit=RunView(stream=stream),
                escalate=second,
                test_timeout=test_timeout,
            )
        except (ModelError, UserError, ValueError) as err:
            _fail(str(err))
            return
        except Interrupted as stop:
            _fail(_interrupted(stop.result), 130)
            return
        except KeyboardInterrupt:
            _fail(_interrupted(None), 130)
            return
    if mode == "ask" and result.answer:
        typer.echo(inert(result.answer))
    if result.outcome != "done":
        raise typer.Exit(2)


@app.command()
def ask(
    question: str,
    repo: RepoOpt = Path("."),
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 12,
    stream: StreamOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
) -> None:
    """Answer a question about the repo, citing path:line."""
    _job(
        "ask", question, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds
    )


@app.command()
def fix(
    tests: Annotated[list[str] | None, typer.Argument(help="Test files or node ids (default: all).")] = None,
    repo: RepoOpt = Path("."),
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    search_schedule: SearchOpt = None,
    test_timeout: TestTimeoutOpt = 120.0,
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
    )


@app.command()
def add(
    feature: str,
    repo: RepoOpt = Path("."),
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    search_schedule: SearchOpt = None,
    test_timeout: TestTimeoutOpt = 120.0,
) -> None:
    """Add a feature together with a test for it."""
    _job("add", feature, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds,
         schedule=search_schedule, test_timeout=test_timeout)


@app.command()
def run(
    task: str,
    repo: RepoOpt = Path("."),
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    layers: LayersOpt = None,
    max_steps: StepsOpt = 20,
    stream: StreamOpt = False,
    escalate_to: EscalateOpt = None,
    max_seconds: SecondsOpt = 900.0,
    test_timeout: TestTimeoutOpt = 120.0,
) -> None:
    """Any other change to the repo; done when the model says so and the suite is green."""
    _job("run", task, repo, model, harness, layers, max_steps, stream, escalate=escalate_to, max_seconds=max_seconds,
         test_timeout=test_timeout)


@app.command()
def demo(
    model: ModelOpt = None,
    harness: HarnessOpt = "on",
    max_steps: StepsOpt = 20,
    stream: StreamOpt = False,
    only: Annotated[list[str] | None, typer.Option("--only", help="Run only these jobs (ask/fix/add/run).")] = None,
    keep: Annotated[Path | None, typer.Option("--keep", help="Keep the demo repos in this folder.")] = None,
) -> None:
    """Run the four first-run jobs on a fresh copy of demo/orders and print a table."""
    from rich.console import Console

    from pyharness.agent import AgentConfig
    from pyharness.console import RunView, jobs_table
    from pyharness.demo import run_demo
    from pyharness.errors import ModelError, UserError
    from pyharness.harness.pipeline import HarnessConfig

    console = Console()
    unknown = sorted(set(only or []) - {"ask", "fix", "add", "run"})
    if unknown:
        _fail(f"--only {', '.join(unknown)}: the demo jobs are ask, fix, add and run")
    try:
        settings = _settings(None, model=model, max_steps=max_steps, stream=stream)
        max_steps, stream = settings["max_steps"], settings["stream"]
        chosen = _chosen_model(settings)
        console.print(f"demo with model [bold]{chosen.name}[/bold]")
        outcomes = run_demo(
            chosen,
            harness=HarnessConfig.parse_spec(harness),
            config=AgentConfig(max_steps=max_steps),
            only=only,
            emit=RunView(stream=stream),
            keep=keep,
            announce=lambda text: console.print(f"\n[bold]{text}[/bold]"),
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


@model_app.command("list")
def model_list() -> None:
    """Show the known packs and whether each is present."""
    from pyharness.models.packs import PACKS, is_present, pack_path

    for pack in PACKS.values():
        state = "present" if is_present(pack) else "not pulled"
        typer.echo(f"{pack.name}\t{state}\t{pack.size / 1e9:.2f} GB\t{pack_path(pack)}\t{pack.description}")


@model_app.command("pull")
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


@app.command()
def undo(
    repo: RepoOpt = Path("."),
    force: Annotated[bool, typer.Option("--force", help="Undo even files changed since the run.")] = False,
) -> None:
    """Put back the files the last run changed, exactly as they were before it."""
    from pyharness.errors import UserError
    from pyharness.session import check_repo
    from pyharness.undo import undo_last

    try:
        for line in undo_last(check_repo(repo), force=force):
            typer.echo(line)
    except UserError as err:
        _fail(str(err))


@app.command()
def log(repo: RepoOpt = Path("."), limit: Annotated[int, typer.Option(help="How many runs.")] = 10) -> None:
    """List the latest runs in the repo (newest first): outcome, steps, tokens, seconds."""
    from pyharness.console import inert
    from pyharness.errors import UserError
    from pyharness.session import check_repo
    from pyharness.transcript import latest_runs, read_transcript

    try:
        runs = latest_runs(check_repo(repo), limit)
    except UserError as err:
        _fail(str(err))
        return
    if not runs:
        typer.echo("no runs recorded yet")
    for path in runs:
        records = read_transcript(path)
        end = next((r for r in reversed(records) if r["event"] == "end"), {})
        tokens = end.get("prompt_tokens", 0) + end.get("completion_tokens", 0)
        typer.echo(inert(
            f"{path.stem}\t{end.get('outcome', 'unfinished')}\t{end.get('steps', '?')} steps\t{tokens} tokens"
            f"\t{end.get('seconds', '?')} s\t{end.get('reason', '')[:80]}"
        ))


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="A run name from `ph log`, or a transcript path.")],
    repo: RepoOpt = Path("."),
) -> None:
    """Show one run turn by turn: the model's reply, the action, the harness's fixes, the observation."""
    from pyharness.console import inert
    from pyharness.transcript import read_transcript

    path = Path(run_id) if run_id.endswith(".jsonl") else repo / ".ph" / "runs" / f"{run_id}.jsonl"
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


@app.command("config")
def config_(repo: RepoOpt = Path("."), model: ModelOpt = None) -> None:
    """Show each setting's effective value and where it comes from: flag, PH_MODEL, the repo's pyproject.toml, your
    config file, or the default.

    Example: ph config --repo ~/src/shop
    """
    from pyharness.config import describe_settings
    from pyharness.console import inert
    from pyharness.errors import UserError
    from pyharness.session import check_repo

    try:
        root = check_repo(repo)
        settings = _settings(root, model=model, max_steps=None, max_seconds=900.0, test_timeout=120.0, stream=False)
    except UserError as err:
        _fail(str(err))
        return
    for line in describe_settings(settings):
        typer.echo(inert(line))


@app.command()
def doctor() -> None:
    """Check the set-up: Python, the test runner, llama-cpp-python, the embedded pack, Ollama."""
    import importlib.util
    import sys

    from pyharness.models.ollama import OllamaModel
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    checks = [
        ("python", sys.version_info >= (3, 11), sys.version.split()[0]),
        ("pytest", importlib.util.find_spec("pytest") is not None, "runs the repo's tests"),
        ("llama-cpp-python", importlib.util.find_spec("llama_cpp") is not None, "pip install 'py-harness[local]'"),
        (f"pack {DEFAULT_PACK}", is_present(PACKS[DEFAULT_PACK]), str(pack_path(PACKS[DEFAULT_PACK]))),
    ]
    ollama = OllamaModel()
    checks.append(("ollama", ollama.available(), f"{ollama.host}, model llama3.1:8b"))
    for name, ok, note in checks:
        typer.echo(f"{'ok ' if ok else 'no '} {name:<28} {note}")
    if not (checks[3][1] or checks[4][1]):
        _fail(f"no model: run `ph model pull {DEFAULT_PACK}` or start Ollama and `ollama pull llama3.1:8b`")


@app.command("eval")
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
    max_seconds: Annotated[float, typer.Option("--max-seconds", help="Wall-clock budget per run.")] = 900.0,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Run again the runs that ended in a model error.")
    ] = False,
    search_schedule: SearchOpt = None,
    from_path: Annotated[
        Path | None,
        typer.Option("--from", help="mutants only: build the jobs from a local project with a tests folder."),
    ] = None,
) -> None:
    """Run an eval suite: each task x model x configuration x repeat, interleaved, resumable, with a report."""
    from concurrent.futures import ThreadPoolExecutor

    from rich.console import Console

    from pyharness.errors import ModelError, UserError
    from pyharness.evalreport import intervention_lines, progress_line, read_results, summary_table, write_reports
    from pyharness.evals import EvalPlan, Models, parse_configs, pending, plan_records, run_eval
    from pyharness.evalsuites import check_task, load_suite, select
    from pyharness.mutants import mutant_counts

    console, err = Console(soft_wrap=True, highlight=False), Console(stderr=True, highlight=False, soft_wrap=True)
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
                raise typer.Exit(1 if bad or loaded.problems else 0)
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
        run_eval(
            plan,
            folder,
            models,
            workers=workers,
            retry_errors=retry_errors,
            on_result=lambda record, done, total: console.print(progress_line(record, done, total, len(model) > 1)),
        )
    except (ModelError, UserError, ValueError) as error:
        _fail(str(error))
        return
    except KeyboardInterrupt:
        _fail(
            "interrupted"
            + (f"; finished runs are in {folder / 'results.jsonl'}: run the same command to resume" if folder else ""),
            130,
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
    errors = sum(s.errors for s in summaries)
    if errors:
        err.print(f"{errors} run(s) ended in a model error (reason in results.jsonl); --retry-errors runs them again")
    console.print(f"results: {folder / 'results.jsonl'}\nsummary: {folder / 'summary.md'}\n{chart}")


if __name__ == "__main__":
    app()
