"""Renders an eval's progress: a bar with the pass count and ETA on a terminal, one plain line per run otherwise,
and the model errors that ended runs, each with its real reason. `pyharness.evals.runner` only reports finished runs."""

from collections import Counter

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from pyharness.cli.console import safe, stderr_console


def run_line(record: dict, done: int, total: int, with_model: bool = False) -> str:
    """One rich-markup line for a finished run; a run that did not pass says why (a model error: its message)."""
    mark = "[green]pass[/green]" if record["pass_strict"] else \
        ("[yellow]lenient only[/yellow]" if record["pass_lenient"] else "[red]fail[/red]")
    who = f"{record['model']} " if with_model else ""
    tokens = record["prompt_tokens"] + record["completion_tokens"]
    why = record.get("reason") if record["outcome"] == "error" else record.get("note")
    note = "" if record["pass_strict"] else f"\n    [dim]{safe(record['outcome'])}: {safe(str(why or '')[:160])}[/dim]"
    return (f"[{done}/{total}] {safe(record['task'])} {safe(who)}{safe(record['config'])} r{record['repeat']}: "
            f"{mark} ({record['steps']} steps, {tokens} tokens, {record['wall_seconds']:.0f} s){note}")


class EvalView:
    """Called with each finished run (`run_eval`'s on_result): on a terminal, a progress bar with ETA and pass
    count under the runs' lines; otherwise the lines alone."""

    def __init__(self, total: int, with_model: bool = False, console: Console | None = None):
        self.console = console or stderr_console()
        self.total, self.with_model, self.passed = total, with_model, 0
        self.progress: Progress | None = None
        if self.console.is_terminal and total:
            self.progress = Progress(
                SpinnerColumn(), TextColumn("eval"), BarColumn(), MofNCompleteColumn(),
                TextColumn("[green]{task.fields[passed]} passed[/green]"), TimeElapsedColumn(), TextColumn("ETA"),
                TimeRemainingColumn(), console=self.console)
            self.task = self.progress.add_task("eval", total=total, passed=0)

    def __enter__(self) -> "EvalView":
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()

    def __call__(self, record: dict, done: int, total: int) -> None:
        self.passed += bool(record["pass_strict"])
        self.console.print(run_line(record, done, total, self.with_model))
        if self.progress is not None:
            self.progress.update(self.task, completed=done, passed=self.passed)


def show_errors(console: Console, records: list[dict]) -> None:
    """The runs a model error ended, grouped by their reason (the server's or backend's own message)."""
    reasons = Counter(str(r.get("reason") or "no reason recorded") for r in records if r.get("outcome") == "error")
    if not reasons:
        return
    console.print(f"[red]{sum(reasons.values())} run(s) ended in a model error[/red]; --retry-errors runs them again:")
    for reason, count in reasons.most_common():
        console.print(f"  {count} x {safe(reason[:300])}")
