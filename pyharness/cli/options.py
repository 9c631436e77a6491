"""The options several `ph` commands share, declared once, and the checks behind them."""

from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli.app import fail

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
PythonOpt = Annotated[
    str | None,
    typer.Option("--python", help="The Python that runs the repo's code and tests (default: PH_PYTHON, your config "
                 "file, an active virtualenv, a .venv/, venv/ or env/ in the repo, else ph's own; see `ph config`)."),
]
HarnessOpt = Annotated[str, typer.Option("--harness", help="on, or off for the thin-wrapper baseline.")]
LayersOpt = Annotated[str | None, typer.Option("--layers", help="Comma-separated harness layers to switch on.")]
StepsOpt = Annotated[int, typer.Option("--max-steps", min=1, help="Model turns before the run stops.")]
EscalateOpt = Annotated[
    str | None,
    typer.Option("--escalate-to", help="A second model for low-confidence turns, e.g. ollama:qwen2.5-coder:7b."),
]


def positive(value: float) -> float:
    """An option callback: the value, or a usage error when it is not more than 0."""
    if value <= 0:
        raise typer.BadParameter(f"{value:g} is not more than 0")
    return value


SecondsOpt = Annotated[
    float, typer.Option("--max-seconds", callback=positive, help="Wall-clock budget of the run, in seconds.")
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
SandboxOpt = Annotated[
    bool,
    typer.Option("--sandbox/--no-sandbox",
                 help="Run the repo's tests and the model's code confined (Linux: namespaces and Landlock; on by "
                      "default). --no-sandbox runs them with your user's rights; the summary and the transcript say "
                      "so."),
]
PROTOCOLS = ("text", "json")


def one_of(choices: tuple[str, ...]):
    """An option callback that takes one of `choices`, else gives a usage error naming them."""

    def check(value: str) -> str:
        if value not in choices:
            raise typer.BadParameter(f"{value!r} is not one of {', '.join(choices)}")
        return value

    return check


protocol_name = one_of(PROTOCOLS)


ProtocolOpt = Annotated[
    str,
    typer.Option("--protocol", callback=protocol_name,
                 help="How the model calls actions: text (an Action line and a fenced body) or json (one JSON object "
                      "per reply, held to a schema by the backend: Ollama's format, a llama.cpp grammar, an OpenAI "
                      "server's response_format)."),
]
ScheduleOpt = Annotated[
    str | None,
    typer.Option("--schedule", help="The trials' candidates in order, as kind@temperature "
                 "(kinds: plain, plan, repair, line, spec, guesses, cloze; vote and confirm once one passes), e.g. "
                 "plain@0,plain@0.8,repair@0.5; its length caps the candidates."),
]


def agent_config(max_steps: int, max_seconds: float, schedule: str | None, json_command: str | None = None,
                 protocol: str = "text"):
    """The run's budgets, protocol and trials schedule; a malformed schedule is a one-line error."""
    from pyharness.loop.agent import AgentConfig
    from pyharness.trials.candidates import parse_schedule

    if schedule is None:
        return AgentConfig(max_steps=max_steps, max_seconds=max_seconds, protocol=protocol)
    try:
        parse_schedule(schedule)
    except ValueError as err:
        fail(f"--schedule: {err}", json_command=json_command)
    return AgentConfig(max_steps=max_steps, max_seconds=max_seconds, schedule=schedule, protocol=protocol)


def settings_for(root: Path | None, **values):
    """The run's settings: a flag typed on the command line wins, else the config files, else the command's default
    (pyharness.cli.config); notes about ignored repo settings go to stderr."""
    from pyharness.cli.config import effective
    from pyharness.cli.console import inert

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


def repo_root(repo: Path | None) -> Path:
    """The repo to work in: --repo as given (a UserError when it is missing or a file); without --repo, the top of
    the git work tree that holds the current folder (said on stderr when that is not the current folder)."""
    from pyharness.loop.session import check_repo
    from pyharness.workspace.gitops import toplevel

    path = check_repo(repo if repo is not None else Path("."))
    top = toplevel(path) if repo is None else None
    if top is None or top.resolve() == path:
        return path
    typer.echo(f"ph: working in {top.resolve()}, the top of the git repo that holds the current folder", err=True)
    return top.resolve()


def use_sandbox(on: bool, json_command: str | None = None) -> None:
    """Set the sandbox for this process; on but not available here is a one-line error naming `--no-sandbox`."""
    from pyharness.workspace import sandbox

    sandbox.set_enabled(on)
    try:
        sandbox.check()
    except RuntimeError as err:
        fail(f"no sandbox: {err}", json_command=json_command)


# `ph eval --on ray` (issue 26): where an eval's runs go, and what the Ray driver needs to know.
PLACES = ("local", "ray")


place_name = one_of(PLACES)


OnOpt = Annotated[
    str,
    typer.Option("--on", callback=place_name,
                 help="Where the runs go: local (this process, --workers threads) or ray (each run a Ray task: "
                      "RAY_ADDRESS or --ray-address joins a cluster, else a local Ray starts with this machine's "
                      "cores; needs the [scale] extra)."),
]
RayAddressOpt = Annotated[
    str | None, typer.Option("--ray-address", help="--on ray: the cluster to join (default: RAY_ADDRESS).")
]
PerServerOpt = Annotated[
    int | None,
    typer.Option("--per-server", min=1,
                 help="--on ray: runs (so model requests) at once per model server (default 1; raise it to the "
                      "server's parallel slots). --model openai:NAME@URL1,URL2 spreads a model over servers."),
]
RetriesOpt = Annotated[
    int | None,
    typer.Option("--retries", min=0, help="--on ray: times a run goes back to the queue after its worker or server "
                 "died, before it is recorded as an error (default 2)."),
]
ThreadsOpt = Annotated[
    int | None,
    typer.Option("--threads", min=1, help="--on ray: llama.cpp threads per run, and the CPUs Ray keeps for it "
                 "(default: this machine's cores)."),
]
