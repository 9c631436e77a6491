"""Renders the loop's events with rich; the loop itself never prints."""

from rich.console import Console
from rich.table import Table

from pyharness.agent import RunResult


class RunView:
    """Prints each action and a short view of its observation; optionally streams the model's text."""

    def __init__(self, console: Console | None = None, stream: bool = False):
        self.console = console or Console(stderr=True, highlight=False)
        self.stream = stream

    def __call__(self, kind: str, **data) -> None:
        if kind == "token" and self.stream:
            self.console.out(data["text"], end="", highlight=False)
        elif kind == "thinking":
            self.console.print(f"[dim]step {data['step']}…[/dim]")
        elif kind == "action":
            call = data["call"]
            args = ", ".join(f"{k}={_short(v)}" for k, v in call.args.items())
            self.console.print(f"[bold cyan]{call.name}[/bold cyan]({args})")
        elif kind == "observation":
            obs = data["observation"]
            first = obs.text.strip().splitlines()[0] if obs.text.strip() else ""
            self.console.print(f"  [{'green' if obs.ok else 'yellow'}]{_short(first, 110)}[/]")
        elif kind == "end":
            result: RunResult = data["result"]
            colour = "green" if result.outcome == "done" else "red"
            self.console.print(f"[{colour}]{result.outcome}[/]: {result.reason}  [dim]({result.steps} steps, "
                               f"{result.seconds:.0f} s, transcript {result.transcript})[/dim]")


def _short(value, limit: int = 60) -> str:
    text = str(value).replace("\n", "⏎")
    return text if len(text) <= limit else text[:limit - 1] + "…"


def jobs_table(rows: list[dict], title: str) -> Table:
    """The demo/eval table: job, result, steps, tokens, seconds."""
    table = Table(title=title)
    for column in ("job", "result", "steps", "tokens", "seconds", "note"):
        table.add_column(column, justify="right" if column in ("steps", "tokens", "seconds") else "left")
    for row in rows:
        mark = "[green]ok[/green]" if row["ok"] else "[red]failed[/red]"
        table.add_row(row["job"], mark, str(row["steps"]), str(row["tokens"]), f"{row['seconds']:.0f}",
                      _short(row.get("note", ""), 70))
    return table
