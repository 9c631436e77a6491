"""Plain helpers the test files import (kept out of conftest.py: tests/safety has a conftest of its own, and two
modules named `conftest` cannot both be imported by name)."""

import fcntl
import json
import os
import pty
import re
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from pyharness.harness.pipeline import LAYERS

LOOP_LAYERS = ",".join(name for name in LAYERS if name != "trials")
"""Every harness layer but trials: the loop as it runs for ask/add/run, or with `--layers` without trials."""


def write_replies(path: Path, replies: list[str]) -> Path:
    """A scripted-model file holding these replies."""
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def live_pack():
    """The embedded pack's path, or skip the test with a message when it is not pulled."""
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    pack = PACKS[DEFAULT_PACK]
    if not is_present(pack):
        pytest.skip(f"embedded pack not pulled (run `ph model pull {DEFAULT_PACK}`); live test skipped")
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        pytest.skip("llama-cpp-python is not installed (pip install '.[local]'); live test skipped")
    return pack_path(pack)


class Terminal:
    """What `ph` wrote when run on a pseudo-terminal: `code`, `out` (all it wrote to the terminal), `stdout` (only
    when stdout had a terminal or pipe of its own)."""

    def __init__(self, code: int, out: str, stdout: str | None):
        self.code, self.out, self.stdout = code, out, stdout

    @property
    def text(self) -> str:
        """`out` as a person reads it: escape sequences and carriage returns gone."""
        return ANSI.sub("", self.out).replace("\r", "")


ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def on_terminal(args: list[str], env: dict[str, str] | None = None, timeout: float = 120, cwd: Path | None = None,
                stdout: str = "terminal", interrupt_when: str | None = None,
                program: list[str] | None = None) -> Terminal:
    """Run `ph ARGS` with stdin and stderr on a pseudo-terminal that is its controlling terminal (so the ^C byte
    written to it is a real Ctrl-C: SIGINT to the foreground process group). `stdout`: "terminal" (the same one),
    "own-terminal" (a second pseudo-terminal, kept apart in `.stdout`) or "pipe" (kept apart in `.stdout`).
    `interrupt_when`: type ^C once this text has appeared on the terminal. `program`: what to run instead of
    `python -m pyharness.cli.main` (an installed `ph` script)."""
    extra, env = env or {}, {**os.environ, "TERM": "xterm-256color", "COLUMNS": "160", "LINES": "40"}
    env.pop("NO_COLOR", None)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    env.update(extra)
    master, slave = pty.openpty()
    own_master = own_slave = None
    if stdout == "own-terminal":
        own_master, own_slave = pty.openpty()
        out_target = own_slave
    elif stdout == "pipe":
        out_target = subprocess.PIPE
    else:
        out_target = slave

    def controlling_terminal():
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    command = [*(program or [sys.executable, "-m", "pyharness.cli"]), *args]
    proc = subprocess.Popen(command, stdin=slave, stdout=out_target, stderr=slave, env=env, cwd=cwd, close_fds=True,
                            preexec_fn=controlling_terminal)
    os.close(slave)
    if own_slave is not None:
        os.close(own_slave)
    reads = {master: b""}
    if own_master is not None:
        reads[own_master] = b""
    elif proc.stdout is not None:
        reads[proc.stdout.fileno()] = b""
    open_fds, end, interrupted = set(reads), time.monotonic() + timeout, interrupt_when is None
    try:
        while open_fds and time.monotonic() < end:
            ready, _, _ = select.select(list(open_fds), [], [], 0.5)
            for fd in ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:  # EIO: the child closed the terminal
                    chunk = b""
                if not chunk:
                    open_fds.discard(fd)
                reads[fd] += chunk
            if not interrupted and interrupt_when.encode() in reads[master]:
                os.write(master, b"\x03")
                interrupted = True
            if not ready and proc.poll() is not None:
                break
    finally:
        os.close(master)
        if own_master is not None:
            os.close(own_master)
        if proc.poll() is None:
            proc.kill()
    code = proc.wait(timeout=10)
    if proc.stdout is not None:
        proc.stdout.close()
    apart = next((v for fd, v in reads.items() if fd != master), None)
    decode = lambda b: b.decode("utf-8", errors="replace")  # noqa: E731
    return Terminal(code, decode(reads[master]), None if apart is None else decode(apart))


# The seeded repo the line ranking (tests/localise) and cloze holes (tests/trials) are tested on.
SHIPPING = '''\
def shipping(weight, express=False):
    """What sending a parcel costs."""
    cost = 5.0
    if weight > 10:
        cost += (weight - 10) * 0.5
    if express:
        cost = cost * 3  # the bug: express doubles the cost
    return round(cost, 2)
'''
