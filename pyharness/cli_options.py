"""The options several `ph` commands share, declared once, and the checks behind them."""

from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli_app import fail

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
SearchOpt = Annotated[
    str | None,
    typer.Option("--search-schedule", help="The search layer's candidates in order, as kind@temperature "
                 "(kinds: plain, plan, repair, line), e.g. plain@0,plain@0.8,repair@0.5; its length caps the "
                 "candidates."),
]


def agent_config(max_steps: int, max_seconds: float, schedule: str | None, json_command: str | None = None):
    """The run's budgets and search schedule; a malformed schedule is a one-line error."""
    from pyharness.agent import AgentConfig
    from pyharness.candidates import parse_schedule

    if schedule is None:
        return AgentConfig(max_steps=max_steps, max_seconds=max_seconds)
    try:
        parse_schedule(schedule)
    except ValueError as err:
        fail(f"--search-schedule: {err}", json_command=json_command)
    return AgentConfig(max_steps=max_steps, max_seconds=max_seconds, search_schedule=schedule)
