"""The `ph` app every command module registers on, and how a command ends: one-line errors and exit codes."""

from contextlib import contextmanager
from typing import Annotated

import typer
from typer.core import TyperGroup

EXIT_CODES = ("Exit codes: 0 the run ended done (or the command did its job); 1 bad input or set-up "
              "(a malformed option, a missing repo, no model, a model server that failed); 2 the run ended "
              "without done (stopped by a budget, invalid, a demo job failed); 130 interrupted (Ctrl-C).")


@contextmanager
def _one_line_usage_errors():
    """A malformed command line is one `ph: ...` line and exit 1 (exit 2 means a run that did not end done)."""
    usage_error = next(k for k in typer.BadParameter.__mro__ if k.__name__ == "UsageError")
    try:
        yield
    except usage_error as err:
        if type(err).__name__ == "NoArgsIsHelpError":  # bare `ph` or `ph model`: the help was shown
            raise typer.Exit(0) from None
        from pyharness.cli.console import inert

        where = f" (see {err.ctx.command_path} -h)" if getattr(err, "ctx", None) is not None else ""
        typer.echo(f"ph: {inert(err.format_message())}{where}", err=True)
        raise typer.Exit(1) from None


class _Commands(TyperGroup):
    """ph's command group: usage errors of any command, sub-app included, go through `_one_line_usage_errors`."""

    def make_context(self, *args, **kwargs):
        with _one_line_usage_errors():
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx):
        with _one_line_usage_errors():
            return super().invoke(ctx)


app = typer.Typer(
    cls=_Commands,
    add_completion=True,
    no_args_is_help=True,
    context_settings={"help_option_names": ["-h", "--help"]},
    pretty_exceptions_enable=False,
    help="A coding helper for small local models: a tight loop, named actions, no shell.",
    epilog='Example: ph ask "Which file defines the tax rate for books?" --repo demo/orders\n\n' + EXIT_CODES,
)


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


def fail(message: str, code: int = 1, json_command: str | None = None, result=None) -> None:
    """One `ph: ...` line on stderr and exit; with --json (json_command set), the failure as the JSON object too."""
    from pyharness.cli.console import inert

    typer.echo(f"ph: {inert(message)}", err=True)
    if json_command:
        from pyharness.cli.jsonview import failure_object, write

        write(failure_object(json_command, message, code, result))
    raise typer.Exit(code)
