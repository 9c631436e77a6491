"""What a run is given: its budgets and settings (what it gives back is `pyharness.runstate.RunResult`)."""

from dataclasses import dataclass


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
