"""The exception types every layer shares: model mistakes go back to the model, the rest end the run."""


class ActionError(Exception):
    """A mistake by the model (bad call, refused path, failed edit); the message goes back to the model."""


class PolicyError(ActionError):
    """A refusal by policy (a path outside the repo, a protected file, a limit); the run reports each one."""


class FormatError(ActionError):
    """A reply in which no valid action could be found."""

    def __init__(self, message: str, *, truncated: bool = False):
        super().__init__(message)
        self.truncated = truncated


class StopRun(Exception):
    """Ends the run; the message says why."""


class Done(StopRun):
    """The harness accepted the job as finished."""


class LimitsExceeded(StopRun):
    """A budget (steps, wall clock, format errors, loops) ran out."""


class Invalid(StopRun):
    """The run's judge was touched: a test file or test config changed during a test run (fix mode)."""


class RepeatedFormatError(LimitsExceeded):
    """Too many replies in a row held no valid action."""


class ModelError(Exception):
    """The model backend failed; the message is one line that says what happened and what to type."""

    def __init__(self, message: str, *, transient: bool = False):
        super().__init__(message)
        self.transient = transient
        """True when asking again may work (a dropped stream, a stall, a server error), not for a wrong setup."""


class InfillUnsupported(ModelError):
    """The backend or model has no native fill-in-the-middle (`Model.infill`); the caller uses a chat framing."""


class UserError(Exception):
    """Bad input from the user (a wrong path, a broken config); one line, nothing touched."""
