"""Ctrl-C: the first one interrupts the run, which ends cleanly and says what it changed; a second one within
2 s exits at once (after killing the processes ph started), with no traceback."""

import atexit
import os
import signal
import threading
import time

FORCE_WINDOW = 2.0
"""Seconds after a Ctrl-C in which a second one forces the exit."""
FORCED = (
    "ph: interrupted again: stopped at once; processes ph started were killed. "
    "`ph undo` puts back files a run changed\n"
)


class CtrlC:
    """The SIGINT handler for the length of one command (only in the main thread, where signals arrive)."""

    def __init__(self, window: float = FORCE_WINDOW):
        self.window = window
        self.last: float | None = None
        self._previous = None
        self._previous_term = None

    def __enter__(self) -> "CtrlC":
        if threading.current_thread() is threading.main_thread():
            self._previous = signal.signal(signal.SIGINT, self._on_sigint)
            # a plain `kill` ends ph the same way (test processes ended, the exit said), not by the default death
            self._previous_term = signal.signal(signal.SIGTERM, self._on_sigint)
        return self

    def __exit__(self, *exc) -> None:
        if self._previous is None:
            return
        signal.signal(signal.SIGTERM, self._previous_term)
        if self.last is not None:
            # interrupted: ph is on its way out. A second Ctrl-C still forces the exit until the interpreter shuts
            # down, which would put back the default action (death by SIGINT, not exit code 130): ignored from then.
            signal.signal(signal.SIGINT, lambda signum, frame: force_exit())
            atexit.register(signal.signal, signal.SIGINT, signal.SIG_IGN)
        else:
            signal.signal(signal.SIGINT, self._previous)
        self._previous = None

    def _on_sigint(self, signum, frame) -> None:
        now = time.monotonic()
        if self.last is not None and now - self.last < self.window:
            force_exit()
        self.last = now
        raise KeyboardInterrupt


def force_exit(code: int = 130) -> None:
    """Kill every process ph started (test runs in their own sessions included: they are still its descendants),
    say so, and leave without unwinding (no cleanup can hang, no traceback is printed)."""
    try:
        import psutil

        for child in psutil.Process().children(recursive=True):
            try:
                child.kill()
            except psutil.Error:
                pass
    except (ImportError, OSError):
        pass
    try:
        os.write(2, FORCED.encode())
    finally:
        os._exit(code)
