"""The sandbox every process that runs repo or model code goes through (tests, the trials' checks, add-mode tests,
trace runs, pytest collection, eval programs).

On Linux, `confined` wraps a command in `sandbox_exec.py`: new PID, network, IPC and UTS namespaces (no network but
loopback, its own `/proc`, so no other process's environment; no System V IPC of the host) and a file system of its
own: a tmpfs root holding the system folders, the interpreter's installation and the repo or scratch copy it runs
in, nothing else (no `/tmp`, `/run`, `$XDG_RUNTIME_DIR` or home, so none of the user's unix sockets), a `/dev` of
harmless devices with a pts of its own. Inside it, `.git`, `.ph`, a venv in the repo and fix mode's test files are
read-only; Landlock lets it write only the repo, a private temp dir and any file named for it (and make no FIFO or
device file in the repo), with no abstract unix socket or signal beyond the sandbox where the kernel has those
scopes; seccomp closes the keyring; resource limits bound file size, processes and address space. A user namespace
maps the user onto itself; when ph runs as root it drops instead to uid 65534 over idmapped mounts, so root-only
files stay closed and the process limit holds. `HOME` and `TMPDIR` point at the private temp dir, which is removed
afterwards. What the sandbox cannot do on this machine `check()` says in one line; runs then need an explicit
`--no-sandbox` (`set_enabled(False)`), which the summary and the transcript state.
"""

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

LAUNCHER = Path(__file__).with_name("sandbox_exec.py")
PLUGIN_DIR = Path(__file__).with_name("pytest_report")
"""ph's pytest plugin (the verdict channel), loaded by its path (`testrun.run_pytest`)."""
SYSTEM_READ = ("/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys",
               "/dev")
"""Folders every sandboxed process may read (and execute from): the system, not the users' homes, /tmp or /run."""
DEVICE_RW = ("/dev/null", "/dev/zero", "/dev/full", "/dev/shm", "/dev/pts", "/dev/ptmx")
"""Devices and folders it may write besides its own: the harmless devices, its own /dev/shm and pts."""
LIMITS = {"fsize": 1 << 30, "nproc": 512, "as": 16 << 30, "core": 0}
"""Resource limits per process: 1 GiB per file written, 512 processes, 16 GiB of address space, no core files."""
DROP_TO = {"uid": 65534, "gid": 65534}
"""Who a root run's sandboxed code is (nobody/nogroup): not root, so root-only files stay closed and the process
limit holds (the kernel never applies RLIMIT_NPROC to root)."""
LANDLOCK_ABI_NEEDED = 1


@dataclass
class Support:
    """What this machine offers the sandbox."""

    landlock_abi: int = 0
    """The kernel's Landlock ABI version (0: none)."""
    namespaces: bool = False
    """User (or, for root, idmapped mounts), PID, network, IPC, UTS and mount namespaces work: a new root builds."""
    drops_root: bool = False
    """ph runs as root and its sandboxed code runs as DROP_TO (idmapped mounts work here)."""
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
    """Probe once: Landlock's ABI, then a real sandboxed run (namespaces, the new root, /proc, loopback, Landlock,
    seccomp); as root, first the run that drops to DROP_TO, else the one that stays root in a user namespace."""
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
    tries = [True, False] if os.geteuid() == 0 else [False]
    for drop in tries:
        line = _probe(drop)
        if not line:
            found.namespaces, found.drops_root = True, drop
            return found
        if drop:
            found.notes.append(f"root runs stay root inside a user namespace: dropping to uid {DROP_TO['uid']} "
                               f"failed ({line})")
    found.problem = f"the sandbox could not start: {line}"
    return found


def _probe(drop: bool) -> str:
    """'' when a sandboxed `python -c` runs; else the line saying why not."""
    with _private() as private:
        policy = _policy(private, private, [], [], sys.executable, drop=drop)
        cmd = [sys.executable, "-I", str(LAUNCHER), json.dumps(policy), sys.executable, "-I", "-c",
               "import os; os.listdir('/proc')"]
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=30, cwd=private)
        except (OSError, subprocess.TimeoutExpired) as e:
            return str(e)
    if done.returncode == 0:
        return ""
    line = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return line.removeprefix("ph sandbox: ")


@contextmanager
def _private() -> Iterator[Path]:
    """A run's private folder, its HOME and TMPDIR, holding `.root`: where the launcher builds its file system."""
    private = Path(tempfile.mkdtemp(prefix="ph-sandbox-"))
    try:
        (private / ".root").mkdir()
        yield private
    finally:
        shutil.rmtree(private, ignore_errors=True)


def check() -> None:
    """Raise RuntimeError with one line when the sandbox is on but cannot run here."""
    if enabled() and support().problem:
        raise RuntimeError(f"{support().problem}; `ph doctor` says more, `--no-sandbox` runs without it")


PROBE = ("import json, sys\n"
         "try:\n    import pytest\n    found = pytest.__version__\nexcept Exception:\n    found = ''\n"
         "print(json.dumps({'version': '%d.%d.%d' % sys.version_info[:3], 'pytest': found, 'paths': [sys.prefix, "
         "sys.base_prefix, sys.exec_prefix, getattr(sys, 'base_exec_prefix', ''), *sys.path]}))")
"""What an interpreter is asked about itself (Python 3.8+): its version, its pytest, and where it reads from."""
_DISTRUSTED: dict[str, str] = {}
"""Interpreters found inside a repo (its `.venv`), by path: what they report is believed only inside the repo."""


@dataclass(frozen=True)
class Probe:
    """What an interpreter said about itself."""

    version: str = ""
    """'3.12.1'; '' when the probe failed (not a Python, or it would not start)."""
    pytest: str = ""
    """pytest's version in that interpreter; '' when it has none."""
    paths: tuple[str, ...] = ()
    """The folders it reads its standard library and packages from (prefixes and sys.path), as the sandbox allows."""
    problem: str = ""
    """Why the probe failed, in one line ('' when it ran)."""


def distrust(python: str, root: Path) -> None:
    """Mark `python` as the repo's own (found in its `.venv`): a program the repo supplied, so its probe runs in the
    sandbox and the folders it reports are read only inside the repo and the installation it is a link to."""
    _DISTRUSTED[python] = str(Path(root).resolve())
    probe.cache_clear()


@functools.lru_cache(maxsize=16)
def probe(python: str) -> Probe:
    """Ask `python` for its version, its pytest and its folders (-I: its installation's own paths, not PYTHONPATH).
    Any interpreter but ph's own is asked inside the sandbox (when it is on), reading only the system, its venv
    and the installation its executable resolves to."""
    tmp = Path(tempfile.mkdtemp(prefix="ph-probe-"))
    cmd = [python, "-I", "-c", PROBE]
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp), "TMPDIR": str(tmp)}
    outside = python != sys.executable and enabled() and not support().problem
    try:
        with (confined(cmd, cwd=tmp, env=env, read=_install_bounds(python), interpreter=False) if outside
              else nullcontext((cmd, env))) as (run, run_env):
            done = subprocess.run(run, capture_output=True, text=True, timeout=60, cwd=tmp, stdin=subprocess.DEVNULL,
                                  env=run_env)
        found = json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired) as err:
        return Probe(problem=f"{python} did not start ({err.__class__.__name__}: {err})"[:200])
    except (json.JSONDecodeError, IndexError):
        found = None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    if not isinstance(found, dict) or not isinstance(found.get("paths"), list):
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        return Probe(problem=f"{python} is not a Python that ph can run ({last})"[:200])
    return Probe(str(found.get("version", "")), str(found.get("pytest") or ""), _readable(python, found["paths"]))


def interpreter_paths(python: str) -> tuple[str, ...]:
    """The folders `python` reads its standard library and packages from, and ph's own package (the verdict plugin
    lives there)."""
    import pyharness

    return tuple(dict.fromkeys([*probe(python).paths, str(Path(pyharness.__file__).parent.resolve())]))


def _install_bounds(python: str) -> list[str]:
    """Where an interpreter may be installed: its venv (the folder holding pyvenv.cfg), the prefix of the executable
    it resolves to, and the base a venv's pyvenv.cfg names; never `/`, the home folder or a folder above it."""
    exe = Path(python)
    found = [exe.parent.parent, exe.resolve().parent.parent]
    try:
        cfg = (exe.parent.parent / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
        home = next((ln.split("=", 1)[1].strip() for ln in cfg.splitlines() if ln.split("=")[0].strip() == "home"), "")
        if home:
            found.append(Path(home).resolve().parent)
    except OSError:
        pass
    out = [str(p.resolve()) for p in found if _installation(p) and not _too_wide(p)]
    return list(dict.fromkeys(out))


def _installation(folder: Path) -> bool:
    """True for a folder that holds a Python installation or venv (pyvenv.cfg, lib/python3.*, Windows' Lib)."""
    return (folder / "pyvenv.cfg").is_file() or (folder / "Lib").is_dir() or any((folder / "lib").glob("python3*"))


def _too_wide(path: Path) -> bool:
    """True for `/`, the user's home folder and every folder above it: never an interpreter's installation."""
    path = Path(path).resolve()
    home = Path.home().resolve()
    return path == Path(path.anchor) or path == home or path in home.parents


def _readable(python: str, reported: list) -> tuple[str, ...]:
    """The reported folders that exist, without `/` or the home folder and those above it; for a repo's own
    interpreter (`distrust`) only those inside the repo or its installation bounds."""
    exe = Path(python)
    found = [str(p) for p in reported if isinstance(p, str) and p]
    found += [str(exe.parent), str(exe.resolve().parent)]
    paths = [Path(p).resolve() for p in found if Path(p).exists()]
    paths = [p for p in paths if not _too_wide(p)]
    if python in _DISTRUSTED:
        bounds = [Path(_DISTRUSTED[python]), *map(Path, _install_bounds(python))]
        paths = [p for p in paths if any(p == b or b in p.parents for b in bounds)]
    return tuple(dict.fromkeys(str(p) for p in paths))


def _policy(private: Path, cwd: Path, write: Iterable[Path], readonly: Iterable[Path], python: str | None,
            read: Iterable[Path] = (), drop: bool = False) -> dict:
    """What the launcher builds (sandbox_exec.py): binds, Landlock rules, limits, who runs; `python`'s installation
    is readable unless it is None."""
    write = [_real(p) for p in write]
    read = [*(interpreter_paths(python) if python else ()), *(_real(p) for p in read)]
    protect = [*_protected_in(write, read), *(_real(p) for p in readonly if Path(p).is_file())]
    here = Path(cwd).absolute()
    return {
        "cwd": str(here),
        "stage": str(private / ".root"),
        "system": [p for p in SYSTEM_READ if os.path.lexists(p)],
        "read": read,
        "write": write,
        "tmp": [_real(private)],
        "devices": list(DEVICE_RW),
        "protect": protect,
        "links": {str(here): _real(here)} if str(here) != _real(here) else {},
        "rlimits": LIMITS,
        "drop": DROP_TO if drop else None,
    }


def _real(path: Path | str) -> str:
    return os.path.realpath(path)


def _protected_in(write: list[str], read: list[str]) -> list[str]:
    """What stays read-only inside the writable folders: their `.git` (a planted `core.fsmonitor`, hook or filter
    driver would run at the user's next `git status`), ph's `.ph` (its transcripts and locks), and an interpreter
    installation inside them (a venv in the repo: a planted `.pth` would run wherever that python starts)."""
    found = []
    for folder in write:
        for name in (".git", ".ph"):
            entry = os.path.join(folder, name)
            if os.path.lexists(entry) and not os.path.islink(entry):
                found.append(entry)
        for path in read:
            if path != folder and path.startswith(folder + os.sep):
                venv = _venv_root(Path(path), Path(folder))
                if venv is not None:
                    found.append(str(venv))
    return list(dict.fromkeys(found))


def _venv_root(path: Path, stop: Path) -> Path | None:
    """The folder holding `pyvenv.cfg` from `path` up to (not including) `stop`, if any."""
    for folder in [path, *path.parents]:
        if folder == stop or stop not in folder.parents:
            return None
        if (folder / "pyvenv.cfg").is_file():
            return folder
    return None


@contextmanager
def confined(cmd: list[str], *, cwd: Path, env: Mapping[str, str], write: Iterable[Path] = (),
             read: Iterable[Path] = (), readonly: Iterable[Path] = (),
             interpreter: bool = True) -> Iterator[tuple[list[str], dict[str, str]]]:
    """The command and environment that run `cmd` in the sandbox, writing only `cwd`, `write` and a private temp
    dir (HOME and TMPDIR; `ph-sandbox-XXXXXXXX`, which `noise` reads as a temp path; it lasts for the block),
    with the files `readonly` and the folders `_protected_in` mounted read-only; unchanged when the sandbox is off.
    `cmd[0]` is the interpreter whose installation the run may read (`interpreter=False`: only what `read` names,
    for asking an interpreter about itself before its paths are known). A `.git` that appears in `cwd` during the run
    (where there was none) is removed afterwards: it would make the folder a repo whose config runs code."""
    env = dict(env)
    if not enabled():
        yield list(cmd), env
        return
    check()
    git = Path(cwd) / ".git"
    had_git = os.path.lexists(git)
    with _private() as private:
        for name in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
            env.pop(name, None)
        home = str(private)
        env.update(HOME=home, TMPDIR=home, TMP=home, TEMP=home)
        policy = _policy(private, Path(cwd), [Path(cwd), *write], list(readonly), cmd[0] if interpreter else None, read,
                         drop=os.geteuid() == 0 and support().drops_root)
        try:
            yield [sys.executable, "-I", str(LAUNCHER), json.dumps(policy), *cmd], env
        finally:
            if not had_git and os.path.lexists(git):
                _remove(git)


def _remove(path: Path) -> None:
    """Remove a file, link or folder tree without following links."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def describe() -> str:
    """One line for a summary or transcript: on (and what confines) or off."""
    if not enabled():
        return "off (--no-sandbox): repo and model code ran with your user's rights"
    s = support()
    if s.problem:
        return f"unavailable: {s.problem}"
    who = f"runs as uid {DROP_TO['uid']}" if s.drops_root and os.geteuid() == 0 else "user"
    return (f"on ({who}, PID, network, IPC, UTS and mount namespaces, a root of its own; Landlock ABI "
            f"{s.landlock_abi}; seccomp; rlimits)")
