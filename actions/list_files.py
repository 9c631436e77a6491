"""list: list the repo's files (optionally only those under a folder)."""

from pydantic import BaseModel, Field

from actions.base import Action, Context, Observation
from pyharness.errors import ActionError

MAX_FILES = 200


class Args(BaseModel):
    path: str = Field(default=".", description="folder relative to the repo root")


def run(args: Args, ctx: Context) -> Observation:
    ws = ctx.workspace
    folder = ws.resolve(args.path)
    prefix = "" if folder == ws.root else ws.rel(folder) + "/"
    if folder.is_file():
        return Observation(f"{args.path} is a file; use read to see it.", ok=False)
    if not folder.exists():
        raise ActionError(f"{args.path} does not exist; list \".\" to see the repo")
    names = [n for n in ws.files() if n.startswith(prefix)]
    shown = names[:MAX_FILES]
    more = f"\n... and {len(names) - MAX_FILES} more" if len(names) > MAX_FILES else ""
    return Observation(f"{len(names)} files under {prefix or './'}:\n" + "\n".join(shown) + more)


ACTION = Action(name="list", args=Args, run=run, description=__doc__.strip(), example='Action: list {"path": "."}',
                aliases=("ls", "list_files", "list_dir", "listdir", "dir", "find_files", "tree"))
