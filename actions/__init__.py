"""The action registry: the core set, plus user actions from the entry-point group `pyharness.actions`."""

from pyharness.actions import answer, done, edit, list_files, read, run_tests, search, write
from pyharness.actions.base import Action, Context, Observation

CORE: dict[str, Action] = {m.ACTION.name: m.ACTION for m in (read, list_files, search, edit, write, run_tests,
                                                              answer, done)}


def registry() -> dict[str, Action]:
    """Core actions plus any installed through the `pyharness.actions` entry-point group (core names win)."""
    from importlib.metadata import entry_points

    found = dict(CORE)
    for ep in entry_points(group="pyharness.actions"):
        action = ep.load()
        if isinstance(action, Action) and action.name not in found:
            found[action.name] = action
    return found


__all__ = ["CORE", "Action", "Context", "Observation", "registry"]
