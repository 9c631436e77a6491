"""Renders the loop's events with rich; the loop itself never prints.

Everything shown comes from outside (model text, file content, test output, server messages), so it is made
inert first: terminal control sequences (ANSI CSI, OSC such as window titles and hyperlinks, any other escape or
control character) are shown as visible `\\x1b`-style text, and rich markup such as `[bold]` prints literally.
"""

import re

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from pyharness.agent import RunResult
from pyharness.refusals import summary

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""Every C0 and C1 control character but tab and newline: ESC starts all ANSI/OSC sequences, and CSI (0x9b) and
OSC (0x9d) have one-byte C1 forms too."""


def inert(text: object) -> str:
    """The text with every terminal control character made visible (`\\x1b`), so printing it cannot act."""
    return CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", str(text))


def safe(text: object) -> str:
    """Text that is inert and whose rich markup prints literally: for `Console.print`."""
    return escape(inert(text))


class RunView:
    """Prints each action and a short view of its observation; optionally streams the model's text."""

    def __init__(self, console: Console | None = None, stream: bool = False):
        self.console = console or Console(stderr=True, highlight=False)
        self.stream = stream

    def __call__(self, kind: str, **data) -> None:
        if kind == "token" and self.stream:
            self.console.out(inert(data["text"]), end="", highlight=False)
        elif kind == "thinking":
            self.console.print(f"[dim]step {data['step']}…[/dim]")
        elif kind == "action":
            call = data["call"]
            args = ", ".join(f"{k}={_short(v)}" for k, v in call.args.items())
            self.console.print(f"[bold cyan]{safe(call.name)}[/bold cyan]({safe(args)})")
        elif kind == "observation":
            obs = data["observation"]
            first = obs.text.strip().splitlines()[0] if obs.text.strip() else ""
            self.console.print(f"  [{'green' if obs.ok else 'yellow'}]{safe(_short(first, 110))}[/]")
        elif kind == "refused":
            self.console.print(f"  [red]refused[/red] {safe(_short(data['text'], 110))}")
        elif kind == "retry":
            self.console.print(f"  [yellow]model error, asking again in {data['wait']:g} s:[/yellow] "
                               f"{safe(_short(data['error'], 100))}")
        elif kind == "end":
            result: RunResult = data["result"]
            colour = "green" if result.outcome == "done" else "red"
            self.console.print(f"[{colour}]{result.outcome}[/]: {safe(result.reason)}  [dim]({result.steps} steps, "
                               f"{result.seconds:.0f} s, transcript {safe(result.transcript)})[/dim]")
            if result.refusals:
                self.console.print(f"[red]{safe(summary(result))}[/red]")


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
        table.add_row(safe(row["job"]), mark, str(row["steps"]), str(row["tokens"]), f"{row['seconds']:.0f}",
                      safe(_short(row.get("note", ""), 70)))
    return table
