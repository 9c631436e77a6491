"""ph's sandbox launcher: `python -I sandbox_exec.py POLICY_JSON CMD...` runs CMD confined (Linux only).

Run by its path with ph's own interpreter, before anything of the repo runs; it imports nothing of pyharness, only
the standard library (Landlock, seccomp and the mount calls go through ctypes). What it does, in order:
1. new PID, network, IPC and UTS namespaces, and a new user namespace (this uid mapped onto itself) unless ph runs
   as root with idmapped mounts at hand (`policy["drop"]`): then no user namespace, and step 3 drops to that uid;
2. forks PID 1 of the new PID namespace, which takes a mount namespace of its own and builds a new root in a
   tmpfs: the system folders, the interpreter's installation and the `read` paths bound read-only, the `write` and
   `tmp` paths bound writable (for a root run idmapped, so the unprivileged uid owns what root owns there), the
   `protect` paths (`.git`, `.ph`, a venv inside the repo, fix mode's test files) bound read-only over them, a
   fresh `/proc`, a `/dev` of null, zero, full, random, urandom, a pts instance of its own, its own `/dev/shm`
   and `/dev/mqueue`; then pivots into it and detaches the old root (so no `/tmp`, `/run`, `$XDG_RUNTIME_DIR` or
   home folder of the host, and none of the unix sockets in them), brings up loopback, names the host `sandbox`;
3. PID 1 forks the command's process, which sets resource limits (file size, processes, address space, no core
   files), drops to the unprivileged uid when asked, applies Landlock (write only the `write` and `tmp` paths, and
   no FIFOs or device files in `write`; read only the paths above; where the kernel has them, no abstract unix
   sockets and no signals outside the sandbox) and a seccomp filter (no keyring calls), and execs CMD;
4. when CMD exits, PID 1 exits with its status and the kernel kills whatever CMD left in the namespace
   (double-forked daemons included); this process then ends the same way CMD did.
A set-up step that fails prints one `ph sandbox: ...` line and exits with SETUP_FAILED.
"""

import ctypes
import fcntl
import json
import os
import platform
import resource
import signal
import socket
import stat
import struct
import sys

SETUP_FAILED = 125
CLONE_NEWNS, CLONE_NEWUTS, CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REC, MS_PRIVATE = 2, 4, 8, 16384, 1 << 18
MNT_DETACH = 2
PR_SET_PDEATHSIG, PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 1, 38, 22, 2
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
AT_FDCWD, AT_EMPTY_PATH, AT_RECURSIVE = -100, 0x1000, 0x8000
OPEN_TREE_CLONE, MOVE_MOUNT_F_EMPTY_PATH = 1, 4
MOUNT_ATTR_RDONLY, MOUNT_ATTR_NOSUID, MOUNT_ATTR_NODEV, MOUNT_ATTR_NOEXEC, MOUNT_ATTR_IDMAP = 1, 2, 4, 8, 0x100000
SYS_OPEN_TREE, SYS_MOVE_MOUNT, SYS_MOUNT_SETATTR = 428, 429, 442  # the same number on every architecture
SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "ppc64le": 203, "s390x": 217}
DEVICES = ("null", "zero", "full", "random", "urandom")
LINKS = {"fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2",
         "ptmx": "pts/ptmx"}
# Landlock's file-system rights (linux/landlock.h) and the ABI that brought each in.
LL_EXECUTE, LL_WRITE_FILE, LL_READ_FILE, LL_READ_DIR = 1, 2, 4, 8
LL_MAKE_CHAR, LL_MAKE_FIFO, LL_MAKE_BLOCK, LL_TRUNCATE = 1 << 6, 1 << 10, 1 << 11, 1 << 14
LL_ALL = {1: (1 << 13) - 1, 2: (1 << 14) - 1, 3: (1 << 15) - 1}
"""Every right of ABI 1-3 (ABI 5's IOCTL_DEV is left unhandled: the devices here are only the harmless ones)."""
LL_SCOPES = 0b11
"""ABI 6: no abstract unix socket and no signal outside the sandbox's Landlock domain."""
# seccomp: the keyring calls (add_key, request_key, keyctl) per audit architecture; everything else is allowed.
AUDIT_ARCHES = {0xC000003E: (248, 249, 250), 0x40000003: (286, 287, 288), 0xC00000B7: (217, 218, 219),
                0x40000028: (309, 310, 311)}
_RLIMITS = {"fsize": resource.RLIMIT_FSIZE, "nproc": resource.RLIMIT_NPROC, "as": resource.RLIMIT_AS,
            "core": resource.RLIMIT_CORE}

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long


class SetupError(Exception):
    """A step of the sandbox's set-up failed."""


class MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64), ("propagation", ctypes.c_uint64),
                ("userns_fd", ctypes.c_uint64)]


class RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]


def _check(ret: int, what: str) -> int:
    if ret < 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")
    return ret


def _sys(number: int, *args) -> int:
    return _libc.syscall(ctypes.c_long(number), *args)


def _write(path: str, text: str) -> None:
    with open(path, "w") as f:
        f.write(text)


def enter_namespaces(policy: dict) -> None:
    """Step 1: new PID, network, IPC and UTS namespaces; a user namespace (this uid mapped onto itself) unless the
    run drops root by itself."""
    flags = CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    if policy.get("drop"):
        _check(_libc.unshare(flags), "unshare")
        return
    uid, gid = os.getuid(), os.getgid()
    _check(_libc.unshare(flags | CLONE_NEWUSER), "unshare")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")


class NewRoot:
    """Step 2: the sandbox's file system, built in a tmpfs at `stage` and pivoted into."""

    def __init__(self, policy: dict) -> None:
        self.policy = policy
        self.stage = policy["stage"]
        self.drop = policy.get("drop")
        self._idmaps: dict[tuple[int, int], int] = {}

    def build(self) -> None:
        _check(_libc.unshare(CLONE_NEWNS), "unshare the mount namespace")
        _check(_libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making / private")
        self._mount("tmpfs", self.stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4m,nr_inodes=16384")
        for path in self.policy["system"]:
            if path in ("/proc", "/dev"):
                continue
            if os.path.islink(path):
                os.symlink(os.readlink(path), self.stage + path)
            elif os.path.isdir(path):
                self._bind(path, readonly=True)
        self._proc_and_dev()
        for path in _shallow_first(self.policy["read"]):
            if not any(_under(path, s) for s in self.policy["system"]):
                self._bind(path, readonly=True, own=True)
        for path in _shallow_first(self.policy["write"]):
            self._bind(path, readonly=False, own=True)
        for path in self.policy["tmp"]:  # it holds the stage: its own mounts are not copied
            self._bind(path, readonly=False, own=True, recursive=False)
        for path in self.policy["protect"]:  # over what is bound already: cloned from the stage (its idmap kept)
            if os.path.lexists(self.stage + path) and not os.path.islink(self.stage + path):
                self._bind(self.stage + path, readonly=True, target=path)
        for link, real in self.policy.get("links", {}).items():
            self._link(link, real)
        for fd in self._idmaps.values():
            os.close(fd)
        self._pivot()

    def _mount(self, source: str, target: str, fstype: str, flags: int, data: str | None) -> None:
        _check(_libc.mount(source.encode(), os.fsencode(target), fstype.encode(), flags,
                           data.encode() if data else None), f"mounting {fstype} on {target}")

    def _bind(self, source: str, *, readonly: bool, own: bool = False, target: str | None = None,
              device: bool = False, recursive: bool = True) -> None:
        """Bind `source` at the same path (or `target`) in the new root: a detached recursive copy of its mounts,
        nosuid (and nodev unless it is a device), read-only when asked, idmapped to the dropped uid for a root
        run's own folders (`own`)."""
        target = source if target is None else target
        is_dir = os.path.isdir(source)
        deep = AT_RECURSIVE if recursive else 0
        fd = _check(_sys(SYS_OPEN_TREE, AT_FDCWD, os.fsencode(source), OPEN_TREE_CLONE | os.O_CLOEXEC | deep),
                    f"binding {source}")
        try:
            attr = MountAttr(MOUNT_ATTR_NOSUID | (0 if device else MOUNT_ATTR_NODEV)
                             | (MOUNT_ATTR_RDONLY if readonly else 0))
            plain = ctypes.sizeof(attr)
            if own and self.drop:
                idmapped = MountAttr(attr.attr_set | MOUNT_ATTR_IDMAP, 0, 0, self._idmap(source))
                done = _sys(SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH | deep, ctypes.byref(idmapped), plain)
                if done < 0 and not readonly:  # the dropped uid could not write there: say so, do not go on
                    _check(done, f"idmapped mount of {source} (its file system may not support them)")
                if done == 0:
                    attr = None  # a read-only folder on a file system without idmapped mounts is bound as it is
            if attr is not None:
                _check(_sys(SYS_MOUNT_SETATTR, fd, b"", AT_EMPTY_PATH | deep, ctypes.byref(attr), plain),
                       f"mount attributes of {source}")
            point = self._mountpoint(target, is_dir)
            _check(_sys(SYS_MOVE_MOUNT, fd, b"", AT_FDCWD, os.fsencode(point), MOVE_MOUNT_F_EMPTY_PATH),
                   f"mounting {source}")
        finally:
            os.close(fd)

    def _mountpoint(self, path: str, is_dir: bool) -> str:
        """The path in the stage, its folders made; never through a symlink (nothing of the repo runs yet, but the
        tree may hold links)."""
        here = self.stage
        parts = [p for p in path.split("/") if p]
        for i, part in enumerate(parts):
            here = f"{here}/{part}"
            last = i == len(parts) - 1
            try:
                st = os.lstat(here)
            except FileNotFoundError:
                if last and not is_dir:
                    os.close(os.open(here, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))
                else:
                    os.mkdir(here, 0o755)
                continue
            if stat.S_ISLNK(st.st_mode) or (not last and not stat.S_ISDIR(st.st_mode)):
                raise SetupError(f"cannot mount {path}: {here[len(self.stage):]} is in the way")
        return here

    def _link(self, link: str, real: str) -> None:
        """A symlink at `link` (a path as ph named it) to `real` (where it resolves), when nothing is there."""
        parent = os.path.dirname(link)
        try:
            self._mountpoint(parent, True)
            os.symlink(real, self.stage + link)
        except (OSError, SetupError):
            pass

    def _idmap(self, source: str) -> int:
        """A user namespace mapping `source`'s owner onto the dropped uid (and its group onto the dropped gid):
        files root owns there are the unprivileged uid's inside, and what it creates is root's on disk."""
        st = os.stat(source)
        key = (st.st_uid, st.st_gid)
        if key in self._idmaps:
            return self._idmaps[key]
        ready_r, ready_w = os.pipe()
        done_r, done_w = os.pipe()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(ready_r)
                os.close(done_w)
                _libc.unshare(CLONE_NEWUSER)
                os.write(ready_w, b"x")
                os.read(done_r, 1)
            finally:
                os._exit(0)
        os.close(ready_w)
        os.close(done_r)
        try:
            os.read(ready_r, 1)
            proc = f"{self.stage}/proc/{pid}"  # the child's pid in this PID namespace: its /proc, not the host's
            _write(f"{proc}/uid_map", f"{st.st_uid} {self.drop['uid']} 1")
            _write(f"{proc}/gid_map", f"{st.st_gid} {self.drop['gid']} 1")
            fd = os.open(f"{proc}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            os.close(ready_r)
            os.close(done_w)
            os.waitpid(pid, 0)
        self._idmaps[key] = fd
        return fd

    def _proc_and_dev(self) -> None:
        """A /proc of this PID namespace; a /dev of a few harmless devices, its own pts, shm and mqueue."""
        self._mountpoint("/proc", True)
        self._mount("proc", self.stage + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
        dev = self._mountpoint("/dev", True)
        self._mount("tmpfs", dev, "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k,nr_inodes=64")
        for name in DEVICES:
            if os.path.exists(f"/dev/{name}"):
                self._bind(f"/dev/{name}", readonly=False, device=True)
        for name, target in LINKS.items():
            os.symlink(target, f"{dev}/{name}")
        os.mkdir(f"{dev}/pts", 0o755)
        self._mount("devpts", f"{dev}/pts", "devpts", MS_NOSUID | MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620")
        os.mkdir(f"{dev}/shm", 0o755)
        self._mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "size=256m,mode=1777")
        os.mkdir(f"{dev}/mqueue", 0o755)
        try:  # POSIX message queues of this IPC namespace; a kernel without them just has none
            self._mount("mqueue", f"{dev}/mqueue", "mqueue", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
        except SetupError:
            pass

    def _pivot(self) -> None:
        number = SYS_PIVOT_ROOT.get(platform.machine())
        if number is None:
            raise SetupError(f"pivot_root: unknown architecture {platform.machine()}")
        os.chdir(self.stage)
        _check(_sys(number, b".", b"."), "pivot_root")
        _check(_libc.umount2(b".", MNT_DETACH), "detaching the old root")
        os.chdir("/")
        attr = MountAttr(MOUNT_ATTR_RDONLY)
        _check(_sys(SYS_MOUNT_SETATTR, AT_FDCWD, b"/", 0, ctypes.byref(attr), ctypes.sizeof(attr)),
               "making the new root read-only")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _shallow_first(paths: list[str]) -> list[str]:
    """Existing paths, each once, parents before children (a child bound later stays visible)."""
    found = [p for p in dict.fromkeys(paths) if os.path.exists(p)]
    return sorted(found, key=lambda p: (p.count("/"), p))


def _loopback_up() -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sh22x", b"lo", 0)
        flags = struct.unpack("16sh22x", fcntl.ioctl(s.fileno(), SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s.fileno(), SIOCSIFFLAGS, struct.pack("16sh22x", b"lo", flags | IFF_UP))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0: none)."""
    found = _sys(SYS_LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(found, 0)


def restrict(policy: dict) -> None:
    """Landlock: read the system, the interpreter's and the `read` paths; write the `write` paths (no FIFOs or
    device files made there), the `tmp` paths and the `devices`; from ABI 6 on, no abstract unix socket and no
    signal beyond the sandbox."""
    abi = landlock_abi()
    if abi < 1:
        raise SetupError("the kernel has no Landlock")
    handled = LL_ALL[min(abi, 3)]
    on_file_read = LL_READ_FILE | LL_EXECUTE
    on_file_write = handled & (LL_EXECUTE | LL_WRITE_FILE | LL_READ_FILE | LL_TRUNCATE)
    attr = RulesetAttr(handled, 0, LL_SCOPES if abi >= 6 else 0)
    ruleset = _check(_sys(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)),
                          ctypes.c_uint32(0)), "creating the Landlock ruleset")
    try:
        reading = [*policy["system"], *policy["read"]]
        rules = [(p, on_file_read | LL_READ_DIR, on_file_read) for p in reading]
        rules += [(p, handled & ~(LL_MAKE_FIFO | LL_MAKE_CHAR | LL_MAKE_BLOCK), on_file_write)
                  for p in policy["write"]]
        rules += [(p, handled & ~(LL_MAKE_CHAR | LL_MAKE_BLOCK), on_file_write)
                  for p in [*policy["tmp"], *policy["devices"]]]
        for path, on_dir, on_file in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                rule = PathBeneath(on_dir if stat.S_ISDIR(os.fstat(fd).st_mode) else on_file, fd)
                _check(_sys(SYS_LANDLOCK_ADD_RULE, ruleset, 1, ctypes.byref(rule), ctypes.c_uint32(0)),
                       f"Landlock rule for {path}")
            finally:
                os.close(fd)
        _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
        _check(_sys(SYS_LANDLOCK_RESTRICT_SELF, ruleset, ctypes.c_uint32(0)), "applying Landlock")
    finally:
        os.close(ruleset)


def no_keyring() -> None:
    """seccomp: add_key, request_key and keyctl fail with EPERM (the session's keys stay out of reach)."""
    ld_abs, jeq, and_k, ret = 0x20, 0x15, 0x54, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, BPF_ALU|AND|K, BPF_RET|K
    allow, deny = 0x7FFF0000, 0x00050000 | 1  # SECCOMP_RET_ALLOW; SECCOMP_RET_ERRNO | EPERM
    to_deny = -1
    code: list[tuple[int, int, int, int]] = []
    for arch, numbers in AUDIT_ARCHES.items():
        code.append((ld_abs, 0, 0, 4))  # seccomp_data.arch
        code.append((jeq, 0, 3 + len(numbers), arch))  # another architecture: on to the next block
        code.append((ld_abs, 0, 0, 0))  # seccomp_data.nr
        code.append((and_k, 0, 0, 0xBFFFFFFF))  # x32's calls carry bit 30
        code += [(jeq, to_deny, 0, n) for n in numbers]
        code.append((ret, 0, 0, allow))
    code += [(ret, 0, 0, allow), (ret, 0, 0, deny)]
    last = len(code) - 1
    prog = (SockFilter * len(code))(*(SockFilter(op, last - i - 1 if jt == to_deny else jt, jf, k)
                                      for i, (op, jt, jf, k) in enumerate(code)))
    fprog = SockFprog(len(code), prog)
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "no_new_privs")
    _check(_libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0), "seccomp")


def confine(policy: dict) -> None:
    """Step 3, in the command's process: resource limits, the unprivileged uid, Landlock, seccomp."""
    for name, value in policy.get("rlimits", {}).items():
        resource.setrlimit(_RLIMITS[name], (value, value))
    drop = policy.get("drop")
    if drop:
        os.setgroups([])
        os.setresgid(drop["gid"], drop["gid"], drop["gid"])
        os.setresuid(drop["uid"], drop["uid"], drop["uid"])
    restrict(policy)
    no_keyring()


def _pid1(policy: dict, cmd: list[str], status_w: int) -> None:
    """PID 1 of the sandbox: set up, run the command, reap, and pass its wait status to the launcher."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # the launcher killed: the whole sandbox goes
    NewRoot(policy).build()
    _loopback_up()
    socket.sethostname("sandbox")
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


POLICY_KEYS = ("cwd", "stage", "system", "read", "write", "tmp", "devices", "protect")


def main(argv: list[str]) -> None:
    policy, cmd = json.loads(argv[1]), argv[2:]
    missing = [key for key in POLICY_KEYS if key not in policy]
    if missing:  # a policy made by hand for an older launcher: say so rather than fail half-way
        _fail(SetupError(f"the policy lacks {', '.join(missing)}: build it with sandbox.confined"))
    try:
        enter_namespaces(policy)
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
