"""Never leave the tree worse: the states of a fix run's changed files, each with how many judging tests it failed,
and the best of them put back when the run stops with more failing than it started with.

A small model's last edit is often its worst (an `if` inverted just before the step budget ends): without this, a
stopped run could hand the user a tree that fails more tests than the one they gave it. A state is counted only where
the whole suite ran in the tree (or a candidate's suite run in a scratch copy, for the files the trials write), so
the run never pays for a test run it would not have made, except the one at its end when the tree is not the last
one measured.
"""

from dataclasses import dataclass, field

BROKEN = 10 ** 9
"""The failing count of a state whose suite did not run to its end (a collection error, a time-out): worse than any
count a run gives."""


def failing_of(run) -> int:
    """How many judging tests a whole-suite `TestRun` failed (BROKEN when the suite did not run to its end)."""
    ran = run.exit_code in (0, 1) and run.reported and not run.timed_out
    return len(run.failing) if ran else BROKEN


@dataclass
class State:
    """The run's changed files as they were at one measurement, and what that measurement counted."""

    failing: int
    files: dict[str, str]
    """Repo-relative path -> its text then, for every file the run had changed by then."""
    origin: str
    """Where the state came from: 'the start', a step, a candidate."""


@dataclass
class BestTree:
    """The start's failing count and the best state seen (fewest failing; the earliest among equals)."""

    start: int
    best: State | None = None
    """None while nothing measured beat the start (the start itself is then the best)."""
    last: tuple[str, int] | None = None
    """(tree hash, failing) of the newest measurement, so the end can skip a run of the tree it already knows."""
    seen: list[str] = field(default_factory=list)

    def measured(self, ws, failing: int, origin: str) -> None:
        """The tree as it is now failed `failing` judging tests: remember it if it is the best yet."""
        self.last = (ws.state_hash(), failing)
        if failing < (self.best.failing if self.best else self.start):
            self.best = State(failing, {rel: ws.read_text(rel) for rel in ws.changed if (ws.root / rel).is_file()},
                              origin)

    def settle(self, ws, measure) -> str:
        """At a stopped run's end: if the tree fails more judging tests than at the start, put back the best state
        seen (the original files if nothing beat the start) and say so in one line; '' when the tree stays. `measure`
        runs the suite in the tree and gives its failing count (called only when the tree is not the last measured)."""
        if not ws.changed:
            return ""
        now = self.last[1] if self.last and self.last[0] == ws.state_hash() else measure()
        if now <= self.start:
            return ""
        files = self.best.files if self.best else {}
        put = [rel for rel in sorted(ws.changed) if ws.put_back(rel, files.get(rel))]
        said = "did not run to its end" if now >= BROKEN else f"failed {now}"
        to = f"the best state seen ({self.best.origin}: {self.best.failing} failing)" if self.best else \
            "the files as they were"
        return (f"the tree's tests {said} where {self.start} failed at the start: put back {to} in "
                f"{', '.join(put) or 'no file'}")
