"""list: list the repo's files (optionally only those under a folder)."""

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError

MAX_FILES = 100
"""A folder with more files than this is shown by subfolder (with file counts), not file by file."""
MAX_ENTRIES = 60


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
    if len(names) <= MAX_FILES:
        return Observation(f"{len(names)} files under {prefix or './'}:\n" + "\n".join(names))
    return Observation(f"{len(names)} files under {prefix or './'}, too many to show one by one; its folders "
                       "(list one to see its files) and files:\n" + "\n".join(overview(names, prefix)))


def overview(names: list[str], prefix: str) -> list[str]:
    """One line per subfolder of `prefix` (with how many files it holds) and per file directly in it, capped."""
    counts: dict[str, int] = {}
    for name in names:
        head, sep, _ = name[len(prefix):].partition("/")
        key = prefix + head + sep
        counts[key] = counts.get(key, 0) + 1
    folders = sorted(k for k in counts if k.endswith("/"))
    lines = [f"{k} ({counts[k]} file{'s' if counts[k] > 1 else ''})" for k in folders]
    lines += sorted(k for k in counts if not k.endswith("/"))
    if len(lines) > MAX_ENTRIES:
        lines = lines[:MAX_ENTRIES] + [f"... {len(lines) - MAX_ENTRIES} more entries; list a folder or search"]
    return lines


ACTION = Action(name="list", args=Args, run=run, description=__doc__.strip(), example='Action: list {"path": "."}',
                aliases=("ls", "list_files", "list_dir", "listdir", "dir", "find_files", "tree"))
