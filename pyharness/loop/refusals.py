"""Which failed actions were refusals by policy, so that a run can say what it refused (injected orders show here)."""

from pyharness.errors import ActionError, PolicyError
from pyharness.harness.call import ActionCall
from pyharness.runstate import RunResult
from pyharness.workspace.tree import Workspace

CHANGES = ("write", "edit")
"""Actions that change files: their path is checked as a write."""


def refusal(call: ActionCall | None, err: ActionError, workspace: Workspace) -> str | None:
    """`action path: reason` when `err` is a refusal by policy (a `PolicyError`, or a path the workspace's resolver
    refuses for this action), else None (an ordinary mistake such as an edit that matched nothing)."""
    if call is None:
        return None
    path = call.args.get("path")
    if not isinstance(err, PolicyError) and not (isinstance(path, str) and _refused(workspace, path, call.name)):
        return None
    first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    return f"{call.name} {path if isinstance(path, str) else ''}: {first}".replace(" :", ":")


def _refused(workspace: Workspace, path: str, name: str) -> bool:
    try:
        workspace.resolve(path, write=name in CHANGES)
    except ActionError:
        return True
    return False


def record(result: RunResult, note: str) -> None:
    """Keep a refusal for the run's summary (each distinct one once)."""
    if note not in result.refusals:
        result.refusals.append(note)


def summary(result: RunResult) -> str:
    """One line for the end of a run: how many actions policy refused, and the first few."""
    if not result.refusals:
        return ""
    shown = "; ".join(result.refusals[:3]) + ("; …" if len(result.refusals) > 3 else "")
    return f"refused {len(result.refusals)} action(s) by policy: {shown}"
