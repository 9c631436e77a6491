"""The exception types every layer shares: model mistakes go back to the model, the rest end the run."""


class ActionError(Exception):
    """A mistake by the model (bad call, refused path, failed edit); the message goes back to the model."""


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


class ModelError(Exception):
    """The model backend failed; the message is one line that says what happened and what to type."""


class UserError(Exception):
    """Bad input from the user (a wrong path, a broken config); one line, nothing touched."""
