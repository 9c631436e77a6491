"""Renders the loop's events with rich; the loop itself never prints.

Everything shown comes from outside (model text, file content, test output, server messages), so it is made
inert first: terminal control sequences (ANSI CSI, OSC such as window titles and hyperlinks, any other escape or
control character, C1 included) and bidirectional controls are shown as visible `\\x1b` / `\\u202e` text, and rich
markup such as `[bold]` prints literally. `inert` is the one function that does it, for every command.
"""

import re
import time
from pathlib import Path

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.spinner import Spinner
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from pyharness.cli.recap import Recap, shown_path, unified
from pyharness.loop.refusals import summary
from pyharness.runstate import RunResult
from pyharness.workspace import sandbox

CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
"""What a terminal would act on rather than show: every C0 and C1 control character but tab and newline (ESC starts
all ANSI/OSC sequences, and CSI (0x9b) and OSC (0x9d) have one-character C1 forms too), the bidirectional controls
(marks, embeddings, overrides, isolates: the Trojan-source trick reorders what is shown) and lone surrogates (a
file name's undecodable bytes, which would reach the terminal as raw bytes)."""

_ANY_CONTROL = re.compile(CONTROL.pattern + r"|[\t\n]")


def inert(text: object, *, newlines: bool = True) -> str:
    """The text with every terminal or bidi control character made visible (`\\x9b`, `\\u202e`), so printing it
    cannot act or reorder; with newlines=False tab and newline are shown too (a file name is one line)."""
    pattern = CONTROL if newlines else _ANY_CONTROL
    return pattern.sub(_visible, str(text))


def _visible(match: re.Match) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def safe(text: object) -> str:
    """Text that is inert and whose rich markup prints literally: for `Console.print`."""
    return escape(inert(text))


def stderr_console() -> Console:
    """ph's console for what a run shows: stderr (stdout holds answers and --json), and when stderr is not a
    terminal, plain lines that never wrap (rich leaves out colour there itself, and honours NO_COLOR)."""
    console = Console(stderr=True, highlight=False)
    if not console.is_terminal:
        console.soft_wrap = True
    return console


class RunView:
    """Renders a run's events: a live status line (phase, seconds, tokens, tokens/s) on a terminal, the model's
    text as it streams, each step with its time and tokens, a diff of each file change, and an end summary.

    `quiet` shows only the end summary line (errors are the cli modules'); `verbose` adds the harness's repairs, dimmed.
    Not on a terminal: no status line, no colour, plain `diff -u` text, wrap-free lines.
    """

    DIFF_LINES = 60
    """Diff lines shown per change (all of them with `verbose`)."""

    def __init__(self, console: Console | None = None, stream: bool | None = None, *, quiet: bool = False,
                 verbose: bool = False, live: bool | None = None):
        self.console = console or stderr_console()
        terminal = self.console.is_terminal
        self.quiet, self.verbose = quiet, verbose
        self.stream = terminal and not quiet if stream is None else stream
        self.live = terminal and not quiet if live is None else live
        self._live: Live | None = None
        self._start()

    def __enter__(self) -> "RunView":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """End the status line (a run that raised before its end event leaves no spinner behind)."""
        self._finish_text()
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _start(self, repo: str = "", python: str = "") -> None:
        self.recap, self.repo, self.python, self.ended = Recap(), repo, python, False
        self.started = self.phase_started = time.monotonic()
        self.phase, self.purpose, self.step = "preparing the run", "", 0
        self.generated, self.pieces, self.first_piece = 0, 0, 0.0
        self.partial, self.open_line, self.acting = "", False, False

    def __call__(self, kind: str, **data) -> None:
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(**data)
        if self.live and not self.ended and self._live is None:
            self._live = Live(_Status(self), console=self.console, transient=True, refresh_per_second=8,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.start()

    def _print(self, *parts, **kw) -> None:
        if not self.quiet:
            self._finish_text()
            self.console.print(*parts, **kw)

    def _set_phase(self, name: str) -> None:
        self.phase, self.phase_started = name, time.monotonic()

    def _on_start(self, repo: str = "", python: str = "", **_) -> None:
        self._start(repo, python.removeprefix("python: "))

    def _on_phase(self, name: str) -> None:
        if not self.live and not self.acting and name != self.phase:
            self._print(f"[dim]· {safe(name)}[/dim]")
        self._set_phase(name)

    def _on_thinking(self, step: int, purpose: str = "") -> None:
        self.step, self.purpose, self.pieces = step, purpose, 0
        self._set_phase(f"thinking (step {step}{', ' + purpose if purpose else ''})")

    def _on_token(self, text: str) -> None:
        if not self.pieces:
            self.first_piece = time.monotonic()
        self.pieces += 1
        if not self.stream or self.quiet:
            return
        text = inert(text)
        if not self.live:
            self.console.out(text, end="", highlight=False)
            self.open_line = not text.endswith("\n")
            return
        lines = (self.partial + text).split("\n")
        self.partial = lines.pop()
        for line in lines:
            self.console.print(Text(line), soft_wrap=True)

    def _finish_text(self) -> None:
        """End the model's streamed text with a newline before anything else is printed."""
        if self.partial:
            self.console.print(Text(self.partial), soft_wrap=True)
            self.partial = ""
        if self.open_line:
            self.console.out("")
            self.open_line = False

    def _on_reply(self, reply) -> None:
        self.generated, self.pieces = self.generated + reply.completion_tokens, 0
        rate = f" · {reply.completion_tokens / reply.seconds:.1f} tok/s" if reply.seconds >= 0.1 else ""
        cached = f", {reply.cached_tokens} cached" if reply.cached_tokens else ""
        what = f" ({safe(self.purpose)})" if self.purpose else ""
        self._print(f"[bold]step {self.step}[/bold]{what} [dim]{reply.seconds:.1f} s · {reply.prompt_tokens} "
                    f"prompt{cached} + {reply.completion_tokens} tokens{rate}[/dim]")
        self._set_phase("reading the reply")

    def _on_action(self, call) -> None:
        args = ", ".join(f"{k}={_short(v)}" for k, v in call.args.items())
        self._print(f"[bold cyan]{safe(call.name)}[/bold cyan]({safe(args)})")
        self.acting = True
        self._set_phase(f"running {call.name}")

    def _on_change(self, path: str, before: str | None, after: str) -> None:
        self.recap.change(path, before, after)
        lines = inert(unified(path, before, after)).splitlines()
        hidden = 0 if self.verbose else max(0, len(lines) - self.DIFF_LINES)
        text = "\n".join(lines[:len(lines) - hidden])
        if self.console.is_terminal:
            self._print(Syntax(text, "diff", theme="ansi_dark", background_color="default", word_wrap=True))
        else:
            self._print(Text(text), soft_wrap=True)
        if hidden:
            self._print(f"[dim]… {hidden} more diff lines (-v shows them all)[/dim]")

    def _on_tests(self, run, targets: list[str]) -> None:
        self.recap.tested(run, targets)

    def _on_observation(self, observation, interventions=()) -> None:
        self.acting = False
        if self.verbose:
            for item in interventions:
                detail = f": {_short(item.detail, 110)}" if item.detail else ""
                self._print(f"  [dim]harness {safe(item.kind)}{safe(detail)}[/dim]")
        first = observation.text.strip().splitlines()[0] if observation.text.strip() else ""
        self._print(f"  [{'green' if observation.ok else 'yellow'}]{safe(_short(first, 110))}[/]")
        self._set_phase("thinking")

    def _on_refused(self, text: str) -> None:
        self._print(f"  [red]refused[/red] {safe(_short(text, 110))}")

    def _on_retry(self, error: object, wait: float) -> None:
        self._print(f"  [yellow]model error, asking again in {wait:g} s:[/yellow] {safe(_short(error, 100))}")

    def _on_end(self, result: RunResult) -> None:
        if self._live is not None:
            self._finish_text()
            self._live.stop()
            self._live = None
        again, self.ended = self.ended, True
        colour = "green" if result.outcome == "done" else "red"
        head = f"[{colour}]{safe(result.outcome)}[/]: {safe(result.reason.strip() or 'no reason given')}"
        files = self.recap.files(result.changed)
        tests = self.recap.tests_line()
        wall = time.monotonic() - self.started
        undo = f"ph undo{f' --repo {shown_path(self.repo)}' if self.repo and Path(self.repo) != Path.cwd() else ''}"
        if again:  # a second end (the run was then found invalid): the figures were shown already
            self.console.print(head)
        elif self.quiet:
            bits = [f"{len(files)} file(s) changed ({_counts(files)})" if files else "no files changed"]
            bits += [f"tests {safe(tests)}"] if tests else []
            bits += [f"{wall:.0f} s"] + ([f"`{safe(undo)}` puts the files back"] if files else [])
            bits += [] if sandbox.enabled() else ["sandbox off"]
            self.console.print(f"{head} [dim]· {' · '.join(bits)}[/dim]")
        else:
            self._finish_text()
            rows = [(name, value) for name, value in (
                ("files", ", ".join(f"{safe(p)} {_counts([(p, a, r)])}" for p, a, r in files) or "none changed"),
                ("tests", safe(tests)),
                ("tokens", f"{result.prompt_tokens} prompt ({result.cached_tokens} cached) + "
                           f"{result.completion_tokens} completion"),
                ("time", f"{wall:.0f} s, {result.steps} step(s)"),
                ("python", safe(self.python)),
                ("sandbox", "" if sandbox.enabled() else "[red]off (--no-sandbox): the tests and the model's code "
                                                        "ran with your user's rights[/red]"),
                ("transcript", safe(shown_path(result.transcript)) if result.transcript else ""),
                ("undo", f"`{safe(undo)}` puts the changed files back" if files else ""),
            ) if value]
            self.console.print(head)
            for name, value in rows:
                self.console.print(f"  [dim]{name:<10}[/dim] {value}")
        if result.refusals:
            self.console.print(f"[red]{safe(summary(result))}[/red]")


class _Status:
    """The live status line: the model's text streamed so far on its line, then phase, seconds and tokens."""

    def __init__(self, view: RunView):
        self.view, self.spinner = view, Spinner("dots")

    def __rich_console__(self, console: Console, options):
        view, now = self.view, time.monotonic()
        if view.partial:
            yield Text(view.partial)
        parts = [view.phase, f"{now - view.phase_started:.0f} s"]
        if view.phase.startswith("thinking") and view.pieces:
            spent = now - view.first_piece
            parts.append(f"{view.pieces} tokens" + (f" at {view.pieces / spent:.1f} tok/s" if spent > 0.5 else ""))
        parts.append(f"run {now - view.started:.0f} s, {view.generated + view.pieces} tokens written")
        self.spinner.update(text=Text(inert(" · ".join(parts)), style="dim"))
        yield self.spinner


def _counts(files: list[tuple[str, int | None, int | None]]) -> str:
    """'+3 -1' over the files whose counts are known."""
    known = [(a, r) for _, a, r in files if a is not None]
    return f"+{sum(a for a, _ in known)} -{sum(r for _, r in known)}" if known else "?"


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
