"""Running repository code: the sandbox, a scrubbed environment, a new session, and the whole process tree ended.

Every child that runs a repo's or the model's code (pytest, the fix-mode trace, collection, scratch checks, task
checks, program runs) goes through `run_tree` or `run_once`, which run it in the sandbox
(`pyharness.workspace.sandbox`), and gets its environment from `clean_env`, which drops variables whose name or value
looks like a credential or names a unix socket of the user's session (`TMUX`, `SSH_AUTH_SOCK`, ...). `run_tree`
starts the child in a new session with a per-run marker variable and, however the run ends (exit, timeout,
KeyboardInterrupt, ph exiting), sends TERM and then KILL to everything the run started: the child's
descendants, every process still in its session, and every process whose environment carries the marker
(which catches grandchildren that called `setsid()` and were re-parented away from the tree).
"""

import atexit
import os
import re
import selectors
import stat
import subprocess
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from pyharness.workspace import sandbox
from pyharness.workspace.redact import SECRET_NAME, redact

MARKER = "PH_RUN_ID"
"""The environment variable that tags every process of one run."""

GRACE = 0.4
"""Seconds between TERM and KILL."""

SECRET_VALUE = re.compile(
    r"(?<![A-Za-z0-9])(?:AKIA[0-9A-Z]{16}|ASIA[0-9A-Z]{16}|ghp_[A-Za-z0-9]{20,}|gh[osur]_[A-Za-z0-9]{20,}"
    r"|github_pat_[A-Za-z0-9_]{20,}|sk-[A-Za-z0-9_\-]{20,}|xox[abposr]-[A-Za-z0-9\-]+|glpat-[A-Za-z0-9_\-]{20,}"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{16,})"
    r"|-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@"
)
"""Values that look like an AWS/GitHub/GitLab/OpenAI/Slack/Stripe token, a private key, or a URL with
`user:password@`."""
SOCKET_NAME = re.compile(
    r"^(?:TMUX|TMUX_PANE|STY|SSH_AUTH_SOCK|SSH_AGENT_PID|GPG_AGENT_INFO|DBUS_SESSION_BUS_ADDRESS"
    r"|DBUS_SYSTEM_BUS_ADDRESS|DOCKER_HOST|DOCKER_CONTEXT|CONTAINER_HOST|XDG_RUNTIME_DIR|WAYLAND_DISPLAY|DISPLAY"
    r"|XAUTHORITY|KRB5CCNAME|PULSE_SERVER|NVIM|NVIM_LISTEN_ADDRESS|KITTY_LISTEN_ON|WEZTERM_UNIX_SOCKET"
    r"|VSCODE_GIT_IPC_HANDLE|GIT_ASKPASS|SSH_ASKPASS|ZELLIJ.*|VSCODE_IPC_HOOK.*)$|_SOCK$|_SOCKET$|_IPC_HANDLE$")
"""Variables that name a way into the user's session (terminal multiplexers, agents, buses, container engines, the
display, an editor's socket): a test that could reach them could run commands with the user's full rights."""

_ACTIVE: dict[int, tuple[str, float]] = {}
_ATEXIT = False


def clean_env(extra: Mapping[str, str] | None = None, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """`base` (default: this process's environment) without credential-like variables, plus `extra`."""
    env = {k: v for k, v in (os.environ if base is None else base).items()
           if not SECRET_NAME.search(k) and not SECRET_VALUE.search(v) and not _names_a_socket(k, v)}
    env.update(extra or {})
    return env


def _names_a_socket(name: str, value: str) -> bool:
    """A socket variable by name (SOCKET_NAME), a `unix:` address, or a path to a unix socket."""
    if SOCKET_NAME.search(name) or value.startswith(("unix:", "npipe:")):
        return True
    if not value.startswith("/") or len(value) > 4096 or "\0" in value:
        return False
    try:
        return stat.S_ISSOCK(os.stat(value).st_mode)
    except (OSError, ValueError):
        return False


@dataclass
class Finished:
    """How a child run ended."""

    returncode: int
    """The child's exit code (negative: the signal that ended it)."""
    timed_out: bool = False
    seconds: float = 0.0


def run_tree(cmd: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
             sink: Callable[[bytes], None] | None = None, write: Iterable[Path] = (),
             readonly: Iterable[Path] = (), pass_fds: tuple[int, ...] = ()) -> Finished:
    """Run `cmd` in the sandbox (`sandbox.confined`: it may write `cwd`, `write` and a private temp dir; `readonly`
    files are mounted read-only) in a new session; stdout+stderr go to `sink` (or nowhere); the whole tree is ended
    afterwards."""
    with sandbox.confined(cmd, cwd=cwd, env=env, write=write, readonly=readonly) as (cmd, env):
        return _run_tree(cmd, cwd=cwd, env=env, timeout=timeout, sink=sink, pass_fds=pass_fds)


def run_once(cmd: list[str], *, cwd: Path, env: Mapping[str, str], stdin: bytes | str, timeout: float,
             read: Iterable[Path] = ()) -> subprocess.CompletedProcess:
    """`subprocess.run` of model code in the sandbox (writing only `cwd` and its temp dir, reading `read` too),
    `stdin` in and the output captured (str when `stdin` is a str); raises TimeoutExpired, after which the whole
    sandbox is gone."""
    with sandbox.confined(cmd, cwd=cwd, env=env, read=read) as (cmd, env):
        return subprocess.run(cmd, input=stdin, capture_output=True, text=isinstance(stdin, str), timeout=timeout,
                              cwd=cwd, env=env, start_new_session=True)


def _run_tree(cmd: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float,
              sink: Callable[[bytes], None] | None, pass_fds: tuple[int, ...]) -> Finished:
    marker = uuid.uuid4().hex
    started, clock = time.time(), time.monotonic()
    proc = subprocess.Popen(cmd, cwd=cwd, env={**env, MARKER: marker}, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE if sink else subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True, pass_fds=pass_fds)
    _remember(proc.pid, marker, started)
    timed_out, finished = False, False
    try:
        timed_out = _pump(proc, sink, clock + timeout)
        finished = True
    finally:
        kill_tree(proc.pid, marker, started)
        _ACTIVE.pop(proc.pid, None)
        if proc.stdout is not None:
            if sink is not None and finished:
                _drain(proc.stdout.fileno(), sink, time.monotonic() + 1.0)
            proc.stdout.close()
        proc.wait()
    return Finished(proc.wait(), timed_out, time.monotonic() - clock)


def _pump(proc: subprocess.Popen, sink: Callable[[bytes], None] | None, deadline: float) -> bool:
    """Copy output to `sink` until the child exits (False) or the deadline passes (True)."""
    fd = proc.stdout.fileno() if proc.stdout is not None and sink is not None else None
    with selectors.DefaultSelector() as sel:
        if fd is not None:
            sel.register(fd, selectors.EVENT_READ)
        while proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            if fd is None:
                try:
                    proc.wait(min(left, 0.2))
                except subprocess.TimeoutExpired:
                    pass
                continue
            if sel.select(min(left, 0.2)):
                data = os.read(fd, 65536)
                if data:
                    sink(data)
                else:
                    sel.unregister(fd)
                    fd = None
    return False


def _drain(fd: int, sink: Callable[[bytes], None], deadline: float) -> None:
    """Read what is left in the pipe after the tree ended (bounded in time: an escapee may hold it open)."""
    with selectors.DefaultSelector() as sel:
        sel.register(fd, selectors.EVENT_READ)
        while time.monotonic() < deadline and sel.select(max(deadline - time.monotonic(), 0)):
            data = os.read(fd, 65536)
            if not data:
                return
            sink(data)


def kill_tree(leader: int, marker: str, started: float) -> list[int]:
    """TERM, then after GRACE seconds KILL, every process of the run; returns the pids that were signalled."""
    signalled: set[int] = set()
    for _ in range(3):  # a process may fork while it is being terminated: look again
        procs = [p for p in _members(leader, marker, started) if p.pid not in signalled]
        if not procs:
            break
        for p in procs:
            _signal(p, "terminate")
        alive = _wait_gone(procs, GRACE)
        for p in alive:
            _signal(p, "kill")
        _wait_gone(alive, 1.0)
        signalled.update(p.pid for p in procs)
    return sorted(signalled)


def _members(leader: int, marker: str, started: float) -> list:
    """The run's live processes: the leader's descendants, its session, and anything carrying the marker."""
    import psutil

    me = os.getpid()
    spared = {me, *(p.pid for p in psutil.Process(me).parents())}
    found: dict[int, psutil.Process] = {}
    try:
        root = psutil.Process(leader)
        if root.create_time() >= started - 1.0:  # not a new process that reused a reaped leader's pid
            for p in [root, *root.children(recursive=True)]:
                found[p.pid] = p
    except psutil.Error:
        pass
    for p in psutil.process_iter(["create_time"]):
        if p.pid in spared or p.pid in found or (p.info["create_time"] or 0) < started - 1.0:
            continue
        try:
            if os.getsid(p.pid) == leader or p.environ().get(MARKER) == marker:
                found[p.pid] = p
        except (OSError, psutil.Error):
            continue
    return [p for pid, p in found.items() if pid not in spared and _running(p)]


def _running(p) -> bool:
    import psutil

    try:
        return p.is_running() and p.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _signal(p, how: str) -> None:
    import psutil

    try:
        getattr(p, how)()
    except psutil.Error:
        pass


def _wait_gone(procs: list, seconds: float) -> list:
    """Wait up to `seconds` for `procs` to exit (a zombie counts as gone); returns those still running."""
    deadline = time.monotonic() + seconds
    alive = [p for p in procs if _running(p)]
    while alive and time.monotonic() < deadline:
        time.sleep(0.02)
        alive = [p for p in alive if _running(p)]
    return alive


def _remember(pid: int, marker: str, started: float) -> None:
    """Track a live run so that ph exiting (atexit) still ends its tree."""
    global _ATEXIT
    _ACTIVE[pid] = (marker, started)
    if not _ATEXIT:
        atexit.register(_end_all)
        _ATEXIT = True


def _end_all() -> None:
    for pid, (marker, started) in list(_ACTIVE.items()):
        kill_tree(pid, marker, started)
        _ACTIVE.pop(pid, None)


class CappedLog:
    """A child's output on disk, capped: the first `head` bytes, a marker line, then the last `tail` bytes."""

    def __init__(self, path: Path, head: int = 512 * 1024, tail: int = 512 * 1024) -> None:
        self.path = path
        self.total = 0
        self.omitted_lines = 0
        self._file = open(path, "wb")  # noqa: SIM115 - closed in close(), it outlives one block
        self._head_left, self._tail_cap, self._tail, self._omitted_bytes = head, tail, bytearray(), 0

    def write(self, data: bytes) -> None:
        """Keep `data` in the head, the tail buffer, or count it as omitted (memory stays within `tail`)."""
        self.total += len(data)
        if self._head_left > 0:
            self._file.write(data[:self._head_left])
            data, self._head_left = data[self._head_left:], max(self._head_left - len(data), 0)
        self._tail += data
        extra = len(self._tail) - self._tail_cap
        if extra > 0:
            self._drop(extra)

    def _drop(self, n: int) -> None:
        self.omitted_lines += self._tail.count(b"\n", 0, n)
        self._omitted_bytes += n
        del self._tail[:n]

    def close(self) -> bytes:
        """Finish the file and return what it holds."""
        try:
            if self._omitted_bytes:
                cut = self._tail.find(b"\n")
                if 0 <= cut < len(self._tail) - 1:  # start the tail on a line boundary
                    self._drop(cut + 1)
                self._file.write(f"\n... [{self.omitted_lines} lines omitted] ...\n".encode())
            self._file.write(self._tail)
        finally:
            self._file.close()

        data = self.path.read_bytes()  # at most head + tail: secrets a test printed are masked on disk too
        clean = redact(data.decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
        if clean != data:  # beside it, then renamed over it: a full disk leaves the old log, never half of one
            masked = self.path.with_name(self.path.name + ".masked")
            try:
                masked.write_bytes(clean)
                os.replace(masked, self.path)
            except BaseException:
                masked.unlink(missing_ok=True)
                raise
        return clean

    @property
    def cut(self) -> bool:
        """True when part of the output was left out."""
        return self._omitted_bytes > 0
