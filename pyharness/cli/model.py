"""`ph model`: the embedded model packs, listed and pulled."""

from typing import Annotated

import typer

from pyharness.cli.app import app, fail

model_app = typer.Typer(no_args_is_help=True, help="Embedded model packs.")
app.add_typer(model_app, name="model")


@model_app.command("list", epilog="Example: ph model list")
def model_list() -> None:
    """Show the known packs and whether each is present."""
    from pyharness.models.packs import PACKS, is_present, pack_path

    for pack in PACKS.values():
        state = "present" if is_present(pack) else "not pulled"
        typer.echo(f"{pack.name}\t{state}\t{pack.size / 1e9:.2f} GB\t{pack_path(pack)}\t{pack.description}")


@model_app.command("pull", epilog="Example: ph model pull qwen2.5-coder-1.5b")
def model_pull(pack: Annotated[str, typer.Argument(help="Pack name.")] = "qwen2.5-coder-1.5b") -> None:
    """Fetch a pack, verify its size and sha256, and store it in the user cache dir."""
    from pyharness.errors import ModelError
    from pyharness.models.packs import PACKS, pull

    if pack not in PACKS:
        fail(f"unknown pack '{pack}': known packs are {', '.join(PACKS)}")
    try:
        with _PullView(pack) as view:
            path = pull(PACKS[pack], progress=view.progress, status=view.status)
    except ModelError as err:
        fail(str(err))
        return
    typer.echo(f"{pack}: verified, at {path}" if view.received else f"{pack}: already present and verified, at {path}")


class _PullView:
    """What `ph model pull` shows: a line for each step of the pull, and a progress bar only while bytes arrive."""

    def __init__(self, pack: str):
        self.pack = pack
        self.received = False
        """True once any bytes of the pack arrived (False: the copy in the cache was kept)."""
        self._bar = None
        self._task = None

    def __enter__(self) -> "_PullView":
        return self

    def __exit__(self, *exc) -> None:
        self._close()

    def status(self, line: str) -> None:
        from pyharness.cli.console import inert

        self._close()  # a new step: the bar of the source before it (if any) is done
        typer.echo(f"{self.pack}: {inert(line)}")

    def progress(self, done: int, total: int) -> None:
        if self._bar is None:
            from rich.progress import BarColumn, DownloadColumn, Progress, TransferSpeedColumn

            self._bar = Progress(
                "[progress.description]{task.description}", BarColumn(), DownloadColumn(), TransferSpeedColumn()
            )
            self._task = self._bar.add_task(f"pull {self.pack}", total=total)
            self._bar.update(self._task, completed=done)
            self._bar.start()  # after the update: the first frame shows these bytes, not an empty bar
        else:
            self._bar.update(self._task, completed=done)
        self.received = True

    def _close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None
