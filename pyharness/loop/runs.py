"""What a run is given (budgets and settings) and what it gives back (how it ended, what it cost)."""

from dataclasses import dataclass, field


@dataclass
class AgentConfig:
    """Budgets and settings of one run."""

    max_steps: int = 20
    """Model turns before the run stops."""
    max_seconds: float = 900.0
    """Wall-clock budget of the run."""
    max_format_errors: int = 3
    """Replies in a row with no valid action before the run stops."""
    max_tokens: int = 768
    """Tokens one reply may generate (the body of a write included)."""
    observation_chars: int = 3000
    """Longest observation sent back (head + tail kept)."""
    model_retries: int = 3
    """Attempts at one model turn when the server fails in a way that may pass (a dropped stream, HTTP 5xx)."""
    retry_backoff: float = 1.0
    """Seconds before the second attempt; doubled before each further one."""
    protocol: str = "text"
    """How a reply calls an action: 'text' (an `Action:` line and a fenced body) or 'json' (one JSON object held to
    a schema by the backend: pyharness/harness/structured.py)."""
    schedule: str | None = None
    """The trials' candidates in order, as kind@temperature (kinds: plain, plan, repair, line, cloze, ...); None: the
    mode's default (`pyharness.trials.schedule.default_schedule`)."""


@dataclass
class RunResult:
    """How a run ended and what it cost."""

    outcome: str
    """'done' (accepted by the harness), 'stopped' (budget, loop, errors), 'error', 'interrupted' (Ctrl-C) or
    'invalid' (see `invalid`)."""
    reason: str
    steps: int = 0
    prompt_tokens: int = 0
    cached_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    answer: str = ""
    transcript: str = ""
    interventions: dict[str, int] = field(default_factory=dict)
    attempts: int = 0
    """Versions of the code the harness checked: changes applied by the loop, or candidates run by the trials."""
    first_pass: int = 0
    """Which attempt was accepted (1: the first try; 0: none was)."""
    trials: dict = field(default_factory=dict)
    """What the trials did: candidates generated and run, which one passed, seconds and tokens spent."""
    invalid: str | None = None
    """Why the run does not count (fix mode: test files or test config changed during it), or None."""
    changed: list[str] = field(default_factory=list)
    """Files the run changed (`ph undo` puts them back)."""
    refusals: list[str] = field(default_factory=list)
    """Every action refused by policy (path, protected file, limit), as `action path: message`."""
