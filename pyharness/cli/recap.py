"""What a run changed and what its tests said, gathered from its events: the diff of each change and the end
summary's figures (files with +/- lines, failing tests before -> after). Plain text; `console.py` renders it."""

import difflib
from dataclasses import dataclass, field
from pathlib import Path


def unified(path: str, before: str | None, after: str) -> str:
    """`diff -u` text of one change; a new file is diffed against /dev/null."""
    lines = difflib.unified_diff((before or "").splitlines(keepends=True), after.splitlines(keepends=True),
                                 "/dev/null" if before is None else f"a/{path}", f"b/{path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def plus_minus(before: str | None, after: str) -> tuple[int, int]:
    """Lines added and removed between two versions of a file."""
    plus = minus = 0
    for line in difflib.unified_diff((before or "").splitlines(), after.splitlines(), lineterm="", n=0):
        if line.startswith("+") and not line.startswith("+++"):
            plus += 1
        elif line.startswith("-") and not line.startswith("---"):
            minus += 1
    return plus, minus


def suite_state(run) -> str:
    """One `TestRun` in a few words: '2 failing', '0 failing (6 passed)', or what stopped it ('timed out')."""
    passed = run.counts.get("passed", 0)
    if run.green:
        return f"0 failing ({passed} passed)"
    if run.failing:
        return f"{len(run.failing)} failing" + (f" ({passed} passed)" if passed else "")
    return run.outcome


@dataclass
class Recap:
    """The files and test runs of one run, in the order they happened."""

    originals: dict[str, str | None] = field(default_factory=dict)
    """Path -> its text before the run's first change to it (None: the run created it)."""
    finals: dict[str, str] = field(default_factory=dict)
    """Path -> its text after the run's last change to it."""
    changes: int = 0
    tests: list[tuple[object, list[str], int]] = field(default_factory=list)
    """(TestRun, its targets ([] = the whole suite), how many changes had been made when it ran)."""

    def change(self, path: str, before: str | None, after: str) -> None:
        self.originals.setdefault(path, before)
        self.finals[path] = after
        self.changes += 1

    def tested(self, run, targets: list[str]) -> None:
        self.tests.append((run, list(targets), self.changes))

    def files(self, changed: list[str] | None = None) -> list[tuple[str, int | None, int | None]]:
        """(path, added, removed) for each changed file, net over the run; counts are None for a file the run
        reports changed but whose change was not seen."""
        rows = []
        for path in changed if changed is not None else sorted(self.finals):
            if path in self.finals:
                rows.append((path, *plus_minus(self.originals[path], self.finals[path])))
            else:
                rows.append((path, None, None))
        return rows

    def tests_line(self) -> str:
        """'1 failing -> 0 failing (6 passed)' from the first run and the last comparable one after the last
        change; '' when no tests ran in the user's tree."""
        if not self.tests:
            return ""
        first, scope, made_first = self.tests[0]
        if made_first:  # the first run came after a change (run and add modes): there is no "before"
            run, _, made = self.tests[-1]
            return f"{suite_state(run)} after the change" if made == self.changes else "not run after the last change"
        if not self.changes:
            return suite_state(first)
        later = [(run, made) for run, targets, made in self.tests[1:] if targets in ([], scope)]
        if not later or later[-1][1] < self.changes:
            return f"{suite_state(first)} before; not run after the last change"
        return f"{suite_state(first)} → {suite_state(later[-1][0])}"

def shown_path(path: str | Path) -> str:
    """A path relative to the working folder when it is under it (shorter to read and to copy)."""
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except (ValueError, OSError):
        return str(path)
