"""The commands that look back at runs or at the set-up: undo, log, show, config, doctor."""

from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli.app import app, fail
from pyharness.cli.options import JsonOpt, ModelOpt, PythonOpt, RepoOpt, repo_root, settings_for


@app.command(epilog="Example: ph undo --repo path/to/repo")
def undo(
    repo: RepoOpt = None,
    force: Annotated[bool, typer.Option("--force", help="Undo even files changed since the run.")] = False,
) -> None:
    """Put back the files the last run changed, exactly as they were before it."""
    from pyharness.cli.console import inert
    from pyharness.errors import UserError
    from pyharness.workspace.undo import undo_last

    try:
        for line in undo_last(repo_root(repo), force=force):
            typer.echo(inert(line, newlines=False))
    except UserError as err:
        fail(str(err))


@app.command(epilog="Example: ph log --limit 5 --json")
def log(
    repo: RepoOpt = None,
    limit: Annotated[int, typer.Option(min=1, help="How many runs.")] = 10,
    json_out: JsonOpt = False,
) -> None:
    """List the latest runs in the repo (newest first): outcome, steps, tokens, seconds."""
    from pyharness.cli.console import inert
    from pyharness.cli.jsonview import run_entry, write
    from pyharness.errors import UserError
    from pyharness.loop.transcript import latest_runs, read_transcript

    try:
        root = repo_root(repo)
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
    from pyharness.cli.console import inert
    from pyharness.errors import UserError
    from pyharness.loop.transcript import latest_runs, read_transcript, runs_dir

    try:
        if run_id is not None and run_id.endswith(".jsonl"):
            path = Path(run_id)
        else:
            root = repo_root(repo)
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
def config_(repo: RepoOpt = None, model: ModelOpt = None, python: PythonOpt = None) -> None:
    """Show each setting's effective value and where it comes from: flag, PH_MODEL, the repo's pyproject.toml, your
    config file, or the default."""
    from pyharness.cli.config import describe_settings
    from pyharness.cli.console import inert
    from pyharness.errors import UserError

    try:
        root = repo_root(repo)
        settings = settings_for(root, model=model, max_steps=None, max_seconds=900.0, test_timeout=120.0, stream=False,
                                python=python)
    except UserError as err:
        fail(str(err))
        return
    for line in describe_settings(settings):
        typer.echo(inert(line))


@app.command(epilog="Example: ph doctor --json")
def doctor(repo: RepoOpt = None, python: PythonOpt = None, json_out: JsonOpt = False) -> None:
    """Check the set-up (Python, the repo's Python and its pytest, llama-cpp-python, the embedded pack, Ollama); exit
    1 if no model can run."""
    from pyharness.cli.doctor import diagnose, python_check
    from pyharness.errors import UserError

    try:
        root = repo_root(repo)
        settings = settings_for(root, python=python)
    except UserError as err:
        fail(str(err))
        return
    checks, problem = diagnose(root, python_check(root, settings.values["python"]))
    if json_out:
        from pyharness.cli.jsonview import write

        write({"command": "doctor", "ok": not problem, "exit_code": 1 if problem else 0, "reason": problem,
               "checks": [vars(c) for c in checks]})
    else:
        for c in checks:
            typer.echo(f"{'ok ' if c.ok else 'no '} {c.name:<28} {c.note}")
    if problem:
        typer.echo(f"ph: {problem}", err=True)
        raise typer.Exit(1)
