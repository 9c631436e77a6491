"""The `ph` command line: the only place that prints errors or exits. Heavy imports happen inside commands."""

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="A coding helper for small local models: a tight loop, named actions, no shell.")
model_app = typer.Typer(no_args_is_help=True, help="Embedded model packs.")
app.add_typer(model_app, name="model")

RepoOpt = Annotated[Path, typer.Option("--repo", help="The repo to work in.")]
ModelOpt = Annotated[str | None, typer.Option("--model", "-m", help="ollama:NAME, llamacpp:PACK_OR_PATH or "
                                              "scripted:PATH (default: Ollama's llama3.1:8b if it answers, else "
                                              "the embedded pack).")]
HarnessOpt = Annotated[str, typer.Option("--harness", help="on, or off for the thin-wrapper baseline.")]
LayersOpt = Annotated[str | None, typer.Option("--layers", help="Comma-separated harness layers to switch on.")]
StepsOpt = Annotated[int, typer.Option("--max-steps", help="Model turns before the run stops.")]
StreamOpt = Annotated[bool, typer.Option("--stream/--no-stream", help="Show the model's text as it is written.")]


def _fail(message: str, code: int = 1) -> None:
    typer.echo(f"ph: {message}", err=True)
    raise typer.Exit(code)


def _job(mode: str, task: str, repo: Path, model: str | None, harness: str, layers: str | None, max_steps: int,
         stream: bool, tests: list[str] | None = None) -> None:
    from pyharness.agent import AgentConfig
    from pyharness.console import RunView
    from pyharness.errors import ModelError, UserError
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.models.resolve import resolve_model
    from pyharness.session import check_repo, run_job

    try:
        root = check_repo(repo)
        config = HarnessConfig.parse_spec(harness, layers)
        result = run_job(root, mode, task, resolve_model(model), tests=tests, harness=config,
                         config=AgentConfig(max_steps=max_steps), emit=RunView(stream=stream))
    except (ModelError, UserError, ValueError) as err:
        _fail(str(err))
        return
    if mode == "ask" and result.answer:
        typer.echo(result.answer)
    if result.outcome != "done":
        raise typer.Exit(2)


@app.command()
def ask(question: str, repo: RepoOpt = Path("."), model: ModelOpt = None, harness: HarnessOpt = "on",
        layers: LayersOpt = None, max_steps: StepsOpt = 12, stream: StreamOpt = False) -> None:
    """Answer a question about the repo, citing path:line."""
    _job("ask", question, repo, model, harness, layers, max_steps, stream)


@app.command()
def fix(tests: Annotated[list[str] | None, typer.Argument(help="Test files or node ids (default: all).")] = None,
        repo: RepoOpt = Path("."), model: ModelOpt = None, harness: HarnessOpt = "on", layers: LayersOpt = None,
        max_steps: StepsOpt = 20, stream: StreamOpt = False) -> None:
    """Run the tests; if any fail, repair the code until they pass."""
    _job("fix", "", repo, model, harness, layers, max_steps, stream, tests=tests)


@app.command()
def add(feature: str, repo: RepoOpt = Path("."), model: ModelOpt = None, harness: HarnessOpt = "on",
        layers: LayersOpt = None, max_steps: StepsOpt = 20, stream: StreamOpt = False) -> None:
    """Add a feature together with a test for it."""
    _job("add", feature, repo, model, harness, layers, max_steps, stream)


@app.command()
def run(task: str, repo: RepoOpt = Path("."), model: ModelOpt = None, harness: HarnessOpt = "on",
        layers: LayersOpt = None, max_steps: StepsOpt = 20, stream: StreamOpt = False) -> None:
    """Any other change to the repo; done when the model says so and the suite is green."""
    _job("run", task, repo, model, harness, layers, max_steps, stream)


@app.command()
def demo(model: ModelOpt = None, harness: HarnessOpt = "on", max_steps: StepsOpt = 20, stream: StreamOpt = False,
         only: Annotated[list[str] | None, typer.Option("--only", help="Run only these jobs (ask/fix/add/run).")] = None,
         keep: Annotated[Path | None, typer.Option("--keep", help="Keep the demo repos in this folder.")] = None
         ) -> None:
    """Run the four first-run jobs on a fresh copy of demo/orders and print a table."""
    from rich.console import Console

    from pyharness.agent import AgentConfig
    from pyharness.console import RunView, jobs_table
    from pyharness.demo import run_demo
    from pyharness.errors import ModelError
    from pyharness.harness.pipeline import HarnessConfig
    from pyharness.models.resolve import resolve_model

    console = Console()
    try:
        chosen = resolve_model(model)
        console.print(f"demo with model [bold]{chosen.name}[/bold]")
        outcomes = run_demo(chosen, harness=HarnessConfig.parse_spec(harness), config=AgentConfig(max_steps=max_steps),
                            only=only, emit=RunView(stream=stream), keep=keep,
                            announce=lambda text: console.print(f"\n[bold]{text}[/bold]"))
    except (ModelError, ValueError) as err:
        _fail(str(err))
        return
    rows = [{"job": o.name, "ok": o.ok, "steps": o.result.steps, "seconds": o.result.seconds, "note": o.note,
             "tokens": o.result.prompt_tokens + o.result.completion_tokens} for o in outcomes]
    console.print(jobs_table(rows, title=f"ph demo — {chosen.name}"))
    console.print(f"demo: {sum(o.ok for o in outcomes)}/{len(outcomes)} jobs succeeded")


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
        with Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                      TransferSpeedColumn()) as progress:
            task = progress.add_task(f"pull {pack}", total=PACKS[pack].size)
            path = pull(PACKS[pack], progress=lambda done, total: progress.update(task, completed=done))
    except ModelError as err:
        _fail(str(err))
        return
    typer.echo(f"{pack}: verified, at {path}")


if __name__ == "__main__":
    app()
