"""loops: notice when the model goes round in circles, and escalate from a hint to a redirect to a stop.

A repeat is the same call (name and arguments) on the same workspace state: the state hash changes
whenever any file changes, so re-running the tests after an edit is progress, not a loop. Thresholds:

- repeat: the 2nd time a (call, state) pair is seen → hint, the 3rd → redirect, the 4th → stop
  (consecutive or not; returning to an earlier state by undoing an edit counts as the same state).
- ping-pong: a run of actions alternating between two pairs, A B A B ... on an unchanged state:
  4 in a row → hint, 5 → redirect, 6 → stop.
- same error: the same error text (exact match, from any calls) 2 times in a row → hint,
  3 → redirect, 4 → stop. `error` is the message an action failed with, None when it succeeded.

When several rules fire, the highest level wins; on a tie ping-pong names the pattern best, then repeat.
"""

import json
from dataclasses import dataclass

NONE, HINT, REDIRECT, HALT = 0, 1, 2, 3
"""A loop verdict's levels: nothing, a hint, the observation replaced by a redirect, the run ends."""
LABEL_KEYS = ("pattern", "query", "path", "tests", "test", "node_id", "target")
MAX_LABEL = 60
MAX_ERROR = 100

ADVICE = {
    "read": "its content is above; edit the file or read a different one",
    "search": "use a different pattern, or read one of the files it found",
    "list": "read one of the files it listed",
    "run_tests": "edit the code before you run the tests again",
    "edit": "read the file and copy the SEARCH lines exactly from it",
    "write": "change the content, or work on a different file",
    "answer": "act on the reason the answer was not accepted",
    "done": "act on the reason done was not accepted",
}
DEFAULT_ADVICE = "use a different action or different arguments"


@dataclass
class LoopVerdict:
    """What the loop detector says about the newest action: level 0 none, 1 hint, 2 redirect, 3 stop."""

    level: int
    message: str = ""
    kind: str = ""
    """'repeat', 'pingpong' or 'same_error'; '' at level 0."""


class LoopDetector:
    """Watches (call, workspace state, error) per turn and says when the model is looping."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], int] = {}
        self._history: list[tuple[str, str]] = []
        self._last_error: str | None = None
        self._error_run = 0

    def observe(self, call_key: str, state_hash: str, error: str | None = None) -> LoopVerdict:
        """Record one action (its `ActionCall.key()`, the state hash it ran on, its error) and judge it."""
        pair = (call_key, state_hash)
        count = self._seen.get(pair, 0) + 1
        self._seen[pair] = count
        self._history.append(pair)
        if error is not None and error == self._last_error:
            self._error_run += 1
        else:
            self._error_run = 1 if error is not None else 0
        self._last_error = error

        run = self._alternating_run()
        verdicts = [
            _pingpong(self._history[-2][0], call_key, run) if run >= 4 else LoopVerdict(NONE),
            _repeat(call_key, count) if count >= 2 else LoopVerdict(NONE),
            _same_error(error or "", self._error_run) if self._error_run >= 2 else LoopVerdict(NONE),
        ]
        best = max(verdicts, key=lambda v: v.level)  # max keeps the first on ties: the order above
        return best if best.level > NONE else LoopVerdict(NONE)

    def _alternating_run(self) -> int:
        """How many of the newest actions alternate between exactly two (call, state) pairs."""
        h = self._history
        if len(h) < 2 or h[-1] == h[-2]:
            return len(h[-1:])
        run = 2
        while run < len(h) and h[-run - 1] == h[-run + 1]:
            run += 1
        return run


def _repeat(call_key: str, count: int) -> LoopVerdict:
    """The verdict for the count-th time the same call ran on the same state."""
    label, advice = call_label(call_key), _advice(call_key)
    if count == 2:
        return LoopVerdict(
            HINT,
            f"You already ran `{label}` on the same files and got the same result; do something different: {advice}.",
            "repeat",
        )
    if count == 3:
        return LoopVerdict(
            REDIRECT,
            f"Stop repeating `{label}`: no file has changed, so it gives the same result again. "
            f"Instead, {advice}. One more repeat ends the run.",
            "repeat",
        )
    return LoopVerdict(HALT, f"Stopped: `{label}` ran {count} times on unchanged files without progress.", "repeat")


def _pingpong(other_key: str, call_key: str, run: int) -> LoopVerdict:
    """The verdict for a run of `run` actions alternating between two calls on an unchanged state."""
    a, b = call_label(other_key), call_label(call_key)
    if run == 4:
        return LoopVerdict(
            HINT,
            f"You are going back and forth between `{a}` and `{b}` and no file has changed; "
            "do something different: use what they showed you to make an edit.",
            "pingpong",
        )
    if run == 5:
        return LoopVerdict(
            REDIRECT,
            f"Stop alternating between `{a}` and `{b}`: nothing changes between them. "
            "Make an edit or take another action. One more round ends the run.",
            "pingpong",
        )
    return LoopVerdict(HALT, f"Stopped: alternated between `{a}` and `{b}` {run} times on unchanged files.", "pingpong")


def _same_error(error: str, run: int) -> LoopVerdict:
    """The verdict for the same error text `run` times in a row."""
    text = _short(error.strip().splitlines()[0] if error.strip() else error, MAX_ERROR)
    if run == 2:
        return LoopVerdict(
            HINT,
            f'That is the same error as last time ("{text}"); do something different: '
            "change the call the error is about.",
            "same_error",
        )
    if run == 3:
        return LoopVerdict(
            REDIRECT,
            f'Stop: the same error came back {run} times in a row ("{text}"). '
            "Change your approach (read the file first, or use another action). One more ends the run.",
            "same_error",
        )
    return LoopVerdict(HALT, f'Stopped: the same error came back {run} times in a row ("{text}").', "same_error")


def call_label(call_key: str) -> str:
    """A short name for a call key, e.g. 'read orders/tax.py' or 'search "tax_rate"'."""
    name, _, rest = call_key.partition(" ")
    try:
        args = json.loads(rest) if rest else {}
    except ValueError:
        return _short(call_key, MAX_LABEL)
    if not isinstance(args, dict) or not args:
        return _short(name, MAX_LABEL)
    key = next((k for k in LABEL_KEYS if k in args), None)
    if key is None:
        key = next((k for k, v in args.items() if isinstance(v, str | int | float) and not isinstance(v, bool)), None)
    if key is None:
        return _short(name, MAX_LABEL)
    value = args[key]
    shown = value if key == "path" and isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return _short(f"{name} {shown}", MAX_LABEL)


def _advice(call_key: str) -> str:
    """What to do instead of repeating this action."""
    return ADVICE.get(call_key.partition(" ")[0], DEFAULT_ADVICE)


def _short(text: str, limit: int) -> str:
    """text cut to `limit` characters, with '...' when cut."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
