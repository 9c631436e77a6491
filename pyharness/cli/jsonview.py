"""`--json`: a command's outcome as one JSON object on stdout, for scripts; everything else goes to stderr."""

import json
from dataclasses import asdict
from pathlib import Path

import typer

from pyharness.runstate import Outcome, RunResult


def write(obj: dict) -> None:
    """Print the object on one line: the only thing a command run with --json writes on stdout. The characters
    `console.inert` shows escaped are written as JSON `\\u` escapes: the same values, nothing a terminal acts on."""
    from pyharness.cli.console import CONTROL

    text = json.dumps(obj, ensure_ascii=False, default=str)
    typer.echo(CONTROL.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text))


def run_object(command: str, result: RunResult, exit_code: int) -> dict:
    """ask/fix/add/run: how the run ended, what it cost, what it changed, where its transcript is."""
    obj = {
        "command": command,
        "outcome": result.outcome,
        "reason": result.reason,
        "exit_code": exit_code,
        "steps": result.steps,
        "seconds": result.seconds,
        "tokens": {"prompt": result.prompt_tokens, "cached": result.cached_tokens,
                   "completion": result.completion_tokens},
        "files_changed": list(result.changed),
        "transcript": result.transcript,
        "refusals": list(result.refusals),
    }
    if result.put_back:
        obj["put_back"] = result.put_back
    if command == "ask":
        obj["answer"] = result.answer
    return obj


def failure_object(command: str, reason: str, exit_code: int, result: RunResult | None = None) -> dict:
    """A command that ended before (or without) a run result: outcome 'error', or 'interrupted' for Ctrl-C."""
    outcome = Outcome.INTERRUPTED if exit_code == 130 else Outcome.ERROR
    if command in ("ask", "fix", "add", "run"):
        base = result if result is not None else RunResult(outcome=outcome, reason=reason)
        return {**run_object(command, base, exit_code), "outcome": outcome, "reason": reason}
    return {"command": command, "outcome": outcome, "reason": reason, "exit_code": exit_code}


def run_entry(path: Path, records: list[dict]) -> dict:
    """One run of `ph log`, from its transcript records."""
    start = next((r for r in records if r.get("event") == "start"), {})
    end = next((r for r in reversed(records) if r.get("event") == "end"), {})
    return {
        "run": path.stem,
        "mode": start.get("mode", path.stem.rsplit("-", 1)[-1]),
        "task": start.get("task", ""),
        "model": start.get("model", ""),
        "outcome": end.get("outcome", "unfinished"),
        "reason": end.get("reason", ""),
        "steps": end.get("steps"),
        "seconds": end.get("seconds"),
        "tokens": end.get("prompt_tokens", 0) + end.get("completion_tokens", 0),
        "files_changed": end.get("changed", []),
        "transcript": str(path),
    }


def summaries_object(suite: str, summaries: list, folder: Path, exit_code: int = 0) -> dict:
    """`ph eval`: the figures of each (model, configuration), and where the results are."""
    return {"command": "eval", "suite": suite, "exit_code": exit_code, "results": str(folder / "results.jsonl"),
            "summary": str(folder / "summary.md"), "configurations": [asdict(s) for s in summaries]}
