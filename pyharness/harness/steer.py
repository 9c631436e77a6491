"""steer: per-call hints and refusals that point the model at its next useful action (never a ban)."""

from pyharness.errors import ActionError
from pyharness.harness.call import ActionCall, ActionSpec, Intervention
from pyharness.harness.examples import example_of
from pyharness.harness.parse import edit_pairs
from pyharness.workspace.tree import Workspace

LOOKS = ("read", "list", "search")
"""Actions that only look: repeating one on unchanged files gives nothing new."""


def copied_example(
    call: ActionCall, actions: dict[str, ActionSpec], ws: Workspace, default_path: str | None = None
) -> Intervention | None:
    """Refuse a path or code copied from the prompt's examples, naming the repo's real files.

    With a `default_path` (the one file a stdout task is about), a write of a new Python file elsewhere (an
    example's path, `solution.py`) is what the model meant for that file: it is retargeted there, and the
    intervention returned.
    """
    path = call.args.get("path")
    examples = "\n".join(a.example for a in actions.values())
    copied = isinstance(path, str) and path not in (".", "") and f'"{path}"' in examples
    if (
        default_path
        and call.name == "write"
        and isinstance(path, str)
        and path != default_path
        and path.endswith(".py")
        and not ws.is_test_path(path)
        and not (ws.root / path).exists()
    ):
        call.args["path"] = default_path
        return Intervention("steer.default_path", f"{path} -> {default_path} (the task's one file)")
    body = "\n".join(str(call.args.get(k, "")) for k in ("body", "content", "search"))
    shared = {ln.strip() for ln in body.splitlines() if len(ln.strip()) > 6} & {
        ln.strip() for ln in examples.splitlines() if len(ln.strip()) > 6 and not ln.startswith("Action:")
    }
    if shared and isinstance(path, str) and (ws.root / path).is_file():
        text = (ws.root / path).read_text(encoding="utf-8", errors="replace")
        if not any(line in text for line in shared):
            raise ActionError(
                f"that code is the example from the instructions, not from {path}. Read {path} "
                "and change its own lines."
            )
    if copied and not (ws.root / path).exists():
        files = [f for f in ws.files() if f.endswith(".py")][:12]
        raise ActionError(
            f"{path} is only the example in the instructions, not a file of this repo. "
            f"Its Python files are: {', '.join(files)}"
        )
    return None


def next_example(mode: str, actions: dict[str, ActionSpec], ws: Workspace, path: str | None = None) -> str:
    """The example a format error shows: the action that most likely comes next in this mode, naming `path`
    (a real file of the repo) rather than the made-up one of the action's own example."""
    if mode == "ask":
        name = "answer" if ws.read_files else "read"
    elif mode == "stdout":
        name = "write" if not ws.changed else "run_tests"
    elif not ws.read_files and not ws.changed:
        name = "read"
    else:
        name = "edit" if not ws.changed else "run_tests"
    return example_of(mode, actions[name], path)


def redundant(call: ActionCall, ws: Workspace, looked: set[tuple[str, str]], state: str) -> bool:
    """True for a restated action that would do nothing new: a look already taken, a write or edit already done."""
    try:
        if call.name in LOOKS:
            return (call.key(), state) in looked
        if call.name == "write":
            target = ws.resolve(call.args["path"])
            current = target.read_text(encoding="utf-8").rstrip("\n") if target.is_file() else None
            return current == call.args["content"].rstrip("\n")
        if call.name == "edit":
            text = ws.read_text(call.args["path"])
            pairs = edit_pairs(call.args)
            return bool(pairs) and all(s.strip() not in text and r.strip() and r.strip() in text for s, r in pairs)
    except (ActionError, OSError, KeyError, ValueError):
        return False
    return False


def source_files(ws: Workspace, limit: int = 200) -> dict[str, str]:
    """The repo's Python files that are not tests (path -> text): where a stated edit may point. On a tree with
    more than `limit` of them, the files the model read or changed come first."""
    names = [p for p in ws.files() if p.endswith(".py") and not ws.is_test_path(p)]
    names = sorted(names, key=lambda p: p not in ws.read_files and p not in ws.changed)[:limit]
    return {p: (ws.root / p).read_text(encoding="utf-8", errors="replace") for p in names}
