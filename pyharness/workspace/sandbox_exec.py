"""ph's sandbox launcher: `python -I sandbox_exec.py POLICY_JSON CMD...` runs CMD confined (Linux only).

Run by its path with ph's own interpreter, before anything of the repo runs; it imports nothing of pyharness
(only the standard library and the `landlock` binding). What it does, in order:
1. new user, mount, network and PID namespaces (this process keeps the same uid, mapped onto itself);
   `/` becomes a private mount tree, so nothing mounted here is seen outside;
2. forks PID 1 of the new PID namespace, which mounts a fresh `/proc` (only the sandbox's own processes: no
   `/proc/PPID/environ` of ph), a fresh tmpfs on `/dev/shm`, brings up loopback (the namespace has no other
   network), and bind-mounts each read-only file over itself read-only (fix mode's test files: a rename over
   them or a write fails even though their folder is writable);
3. PID 1 forks the command's process, which sets resource limits (file size, processes, address space, no core
   files), applies the Landlock rules (write only the listed folders, read only the listed ones) and execs CMD;
4. when CMD exits, PID 1 exits with its status and the kernel kills whatever CMD left in the namespace
   (double-forked daemons included); this process then ends the same way CMD did.
A set-up step that fails prints one `ph sandbox: ...` line and exits with SETUP_FAILED.
"""

import ctypes
import fcntl
import json
import os
import resource
import signal
import socket
import struct
import sys

SETUP_FAILED = 125
CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x00020000, 0x10000000, 0x20000000, 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 18, 1 << 21
PR_SET_PDEATHSIG = 1
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
_STATVFS_TO_MS = {os.ST_NOSUID: MS_NOSUID, os.ST_NODEV: MS_NODEV, os.ST_NOEXEC: MS_NOEXEC,
                  os.ST_NOATIME: MS_NOATIME, os.ST_NODIRATIME: MS_NODIRATIME, os.ST_RELATIME: MS_RELATIME}
_RLIMITS = {"fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC, "as": resource.RLIMIT_AS,
            "core": resource.RLIMIT_CORE}

_libc = ctypes.CDLL(None, use_errno=True)


class SetupError(Exception):
    """A step of the sandbox's set-up failed."""


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces() -> None:
    """Step 1: new namespaces, this uid and gid mapped onto themselves, and a private mount tree."""
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWPID), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making / private")


def prepare(policy: dict) -> None:
    """Step 2, in PID 1: /proc, /dev/shm, loopback, read-only files."""
    _check(_libc.mount(b"proc", b"/proc", b"proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None), "mounting /proc")
    if os.path.isdir("/dev/shm"):
        _check(_libc.mount(b"tmpfs", b"/dev/shm", b"tmpfs", MS_NOSUID | MS_NODEV, b"size=256m,mode=1777"),
               "mounting /dev/shm")
    _loopback_up()
    for path in policy.get("readonly", []):
        _bind_readonly(path)


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))


def _bind_readonly(path: str) -> None:
    """Mount `path` over itself read-only; the remount keeps the flags its mount has (the kernel insists)."""
    if not os.path.isfile(path) or os.path.islink(path):
        return
    keep = 0
    have = os.statvfs(path).f_flag
    for st, ms in _STATVFS_TO_MS.items():
        if have & st:
            keep |= ms
    raw = os.fsencode(path)
    _check(_libc.mount(raw, raw, None, MS_BIND, None), f"binding {path}")
    _check(_libc.mount(None, raw, None, MS_REMOUNT | MS_BIND | MS_RDONLY | keep, None), f"read-only {path}")


def confine(policy: dict) -> None:
    """Step 3, in the command's process: resource limits, then Landlock."""
    for name, value in policy.get("rlimits", {}).items():
        resource.setrlimit(_RLIMITS[name], (value, value))
    import landlock
    from landlock import FSAccess

    abi = landlock.landlock_abi_version()
    file_read = FSAccess.READ_FILE | FSAccess.EXECUTE
    file_write = file_read | FSAccess.WRITE_FILE | (FSAccess.TRUNCATE if abi >= 3 else 0)
    dir_read = file_read | FSAccess.READ_DIR
    rules = landlock.Ruleset()
    for path in policy.get("read", []):
        if os.path.exists(path):
            rules.allow(path, rules=dir_read if os.path.isdir(path) else file_read)
    for path in policy.get("write", []):
        if os.path.exists(path):
            rules.allow(path, rules=FSAccess.all() if os.path.isdir(path) else file_write)
    rules.apply()


def _pid1(policy: dict, cmd: list[str], status_w: int) -> None:
    """PID 1 of the sandbox: set up, run the command, reap, and pass its wait status to the launcher."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the launcher killed: the whole sandbox goes
    prepare(policy)
    child = os.fork()
    if child == 0:
        os.close(status_w)
        try:
            confine(policy)
            os.chdir(policy["cwd"])
            os.execvp(cmd[0], cmd)
        except BaseException as e:  # noqa: BLE001 - whatever failed, say it in one line and end this child
            _fail(e)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # PID 1 ignores what it does not handle
        signal.signal(sig, lambda s, _f: os.kill(child, s))
    while True:
        try:
            pid, status = os.waitpid(-1, 0)
        except ChildProcessError:
            status = 0
            break
        if pid == child:
            break
    os.write(status_w, struct.pack("i", status))
    os._exit(0)


def _fail(error: BaseException) -> None:
    os.write(2, f"ph sandbox: {error}\n".encode(errors="replace"))
    os._exit(SETUP_FAILED)


def main(argv: list[str]) -> None:
    policy, cmd = json.loads(argv[1]), argv[2:]
    try:
        enter_namespaces()
    except (OSError, SetupError) as e:
        _fail(e)
    status_r, status_w = os.pipe()
    pid1 = os.fork()
    if pid1 == 0:
        os.close(status_r)
        try:
            _pid1(policy, cmd, status_w)
        except BaseException as e:  # noqa: BLE001 - a failed set-up in PID 1: one line, and the sandbox ends
            _fail(e)
    os.close(status_w)
    _, own = os.waitpid(pid1, 0)
    data = os.read(status_r, 4)
    if len(data) < 4:  # PID 1 failed or was killed before the command ended
        code = os.waitstatus_to_exitcode(own)
        sys.exit(code if code >= 0 else SETUP_FAILED)
    code = os.waitstatus_to_exitcode(struct.unpack("i", data)[0])
    if code < 0:  # end as the command ended: killed by the same signal
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main(sys.argv)
