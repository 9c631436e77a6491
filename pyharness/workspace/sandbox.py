"""The sandbox every process that runs repo or model code goes through (tests, search checks, add-mode tests,
trace runs, pytest collection, eval programs).

On Linux, `confined` wraps a command in `sandbox_exec.py`: new user, PID, network and mount namespaces (no
network but loopback, its own `/proc`, so no other process's environment), Landlock rules (write only the
repo or scratch copy it runs in, a private temp dir and any file named for it; read the system folders, the
interpreter's installation and that repo), resource limits (file size, processes, address space), and fix
mode's test files bind-mounted read-only. `HOME` and `TMPDIR` point at the private temp dir, which is removed
afterwards. What the sandbox cannot do on this machine `check()` says in one line; runs then need an explicit
`--no-sandbox` (`set_enabled(False)`), which the summary and the transcript state.
"""

import functools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

LAUNCHER = Path(__file__).with_name("sandbox_exec.py")
PLUGIN_DIR = Path(__file__).with_name("pytest_report")
"""ph's pytest plugin (the verdict channel): a folder on the sandboxed run's PYTHONPATH."""
SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys",
               "/dev")
"""Folders every sandboxed process may read (and execute from): the system, not the users' homes or /tmp."""
DEVICE_RW = ("/dev/null", "/dev/shm")
"""Devices and folders it may write besides its own: the null device, and the sandbox's own /dev/shm."""
LIMITS = {"fsize": 1 << 30, "nproc": 512, "as": 16 << 30, "core": 0}
"""Resource limits per process: 1 GiB per file written, 512 processes, 16 GiB of address space, no core files."""
LANDLOCK_ABI_NEEDED = 1


@dataclass
class Support:
    """What this machine offers the sandbox."""

    landlock_abi: int = 0
    """The kernel's Landlock ABI version (0: none)."""
    namespaces: bool = False
    """Unprivileged user, PID, network and mount namespaces work (a fresh /proc mounts)."""
    problem: str = ""
    """'' when the sandbox works; else one line saying what is missing."""
    notes: list[str] = field(default_factory=list)


_ENABLED = True
_LOCAL = threading.local()


def set_enabled(on: bool) -> None:
    """Turn the sandbox on (the default) or off for this process (`--no-sandbox`)."""
    global _ENABLED
    _ENABLED = on


def enabled() -> bool:
    """True when runs of repo code are confined (in this thread: `override` wins over `set_enabled`)."""
    return getattr(_LOCAL, "on", _ENABLED)


@contextmanager
def override(on: bool) -> Iterator[None]:
    """The sandbox on or off for this thread's runs inside the block (an eval's `sandbox=on,off` axis)."""
    before = getattr(_LOCAL, "on", None)
    _LOCAL.on = on
    try:
        yield
    finally:
        if before is None:
            del _LOCAL.on
        else:
            _LOCAL.on = before


@functools.lru_cache(maxsize=1)
def support() -> Support:
    """Probe once: Landlock's ABI, then a real sandboxed `true` (namespaces, /proc, loopback, Landlock)."""
    if not sys.platform.startswith("linux"):
        return Support(problem=f"the sandbox needs Linux (namespaces and Landlock); this is {sys.platform}")
    found = Support()
    try:
        import landlock

        found.landlock_abi = landlock.landlock_abi_version()
    except ImportError:
        return Support(problem="the `landlock` package is not installed (pip install landlock)")
    except OSError as e:
        return Support(problem=f"the kernel has no Landlock ({e.strerror or e}; it needs Linux 5.13+ with "
                               f"landlock in the lsm= list)")
    tmp = Path(tempfile.mkdtemp(prefix="ph-sandbox-probe-"))
    try:
        cmd = [sys.executable, "-I", str(LAUNCHER), json.dumps(_policy(tmp, [tmp], [], sys.executable)),
               sys.executable, "-I", "-c", "import os; os.listdir('/proc')"]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=tmp)
    except (OSError, subprocess.TimeoutExpired) as e:
        found.problem = f"the sandbox could not start ({e})"
        return found
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if done.returncode != 0:
        line = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        found.problem = f"the sandbox could not start: {line.removeprefix('ph sandbox: ')}"
        return found
    found.namespaces = True
    return found


def check() -> None:
    """Raise RuntimeError with one line when the sandbox is on but cannot run here."""
    if enabled() and support().problem:
        raise RuntimeError(f"{support().problem}; `ph doctor` says more, `--no-sandbox` runs without it")


@functools.lru_cache(maxsize=8)
def interpreter_paths(python: str) -> tuple[str, ...]:
    """The folders `python` reads its standard library and packages from (its prefixes and sys.path), and ph's
    own package (the verdict plugin lives there)."""
    probe = "import sys, json; print(json.dumps([sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix, " \
            "*sys.path]))"
    try:  # -I: the installation's own paths, not PYTHONPATH or the folder of whatever script runs ph
        out = subprocess.run([python, "-I", "-c", probe], capture_output=True, text=True, timeout=30)
        found = json.loads(out.stdout) if out.returncode == 0 else []
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        found = []
    exe = Path(python)
    found += [str(exe.parent), str(exe.resolve().parent)]
    import pyharness

    found.append(str(Path(pyharness.__file__).parent))
    return tuple(dict.fromkeys(str(Path(p).resolve()) for p in found if p and Path(p).exists()))


def _policy(cwd: Path, write: Iterable[Path], readonly: Iterable[Path], python: str,
            read: Iterable[Path] = ()) -> dict:
    write = [str(Path(p).resolve()) for p in write]
    return {
        "cwd": str(cwd),
        "write": [*write, *DEVICE_RW],
        "read": [*SYSTEM_READ, *interpreter_paths(python), *(str(Path(p).resolve()) for p in read), *write],
        "readonly": [str(p) for p in readonly],
        "rlimits": LIMITS,
    }


@contextmanager
def confined(cmd: list[str], *, cwd: Path, env: Mapping[str, str], write: Iterable[Path] = (),
             read: Iterable[Path] = (), readonly: Iterable[Path] = ()) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The command and environment that run `cmd` in the sandbox, writing only `cwd`, `write` and a private temp
    dir (HOME and TMPDIR; `ph-sandbox-XXXXXXXX`, which `noise` reads as a temp path; it lasts for the block), with the
    files `readonly` mounted read-only; unchanged when the sandbox is off. `cmd[0]` is the interpreter whose
    installation the run may read."""
    env = dict(env)
    if not enabled():
        yield list(cmd), env
        return
    check()
    private = Path(tempfile.mkdtemp(prefix="ph-sandbox-"))
    try:
        for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
            env.pop(name, None)
        env.update(HOME=str(private), TMPDIR=str(private), TMP=str(private), TEMP=str(private))
        policy = _policy(Path(cwd), [Path(cwd), private, *write], list(readonly), cmd[0], read)
        yield [sys.executable, "-I", str(LAUNCHER), json.dumps(policy), *cmd], env
    finally:
        shutil.rmtree(private, ignore_errors=True)


def describe() -> str:
    """One line for a summary or transcript: on (and what confines) or off."""
    if not enabled():
        return "off (--no-sandbox): repo and model code ran with your user's rights"
    s = support()
    if s.problem:
        return f"unavailable: {s.problem}"
    return f"on (user, PID, network and mount namespaces; Landlock ABI {s.landlock_abi}; rlimits)"
