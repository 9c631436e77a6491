"""The user's session (cases 79-83): what sandboxed code can reach of the user's session. Not their unix sockets (tmux,
agents, buses: no `/tmp`, `/run` or home in the sandbox's root, no abstract sockets, no variables naming them), not
the host's System V IPC (its own IPC namespace, gone with the run), not their terminals or keyring, not the metadata
of anything outside the writable set; and, when ph runs as root, not root's privileges."""

import ctypes
import os
import platform
import shutil
import socket
import subprocess
import sys
import textwrap
import threading
import uuid
from pathlib import Path

import pytest
from calckit import attack_test, calc_repo, read_record

from pyharness.workspace import sandbox
from pyharness.workspace.procs import clean_env
from pyharness.workspace.testrun import run_pytest

IPC_CREAT, IPC_RMID = 0o1000, 0
KEY_CALLS = {"x86_64": (248, 250), "aarch64": (217, 219)}
"""add_key and keyctl, by machine (the keyring test runs where these are known)."""


def attack(tree, body: str, readonly: list[str] | None = None) -> dict:
    """Run `body` as a repo test (in the sandbox, as `ph` runs tests) and return what it recorded."""
    record = tree.repo / f"record-{uuid.uuid4().hex[:8]}.json"
    tree.write("tests/test_attack.py", attack_test(body, record))
    run = run_pytest(tree.repo, ["tests/test_attack.py"], timeout=120, readonly=readonly)
    tree.seen(run.observation())
    found = read_record(record)
    assert found, run.observation()
    return found


class Listener:
    """A unix socket server at a path and at an abstract name, counting the connections it gets."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.abstract, self.connections = path, f"ph-test-{uuid.uuid4().hex}", 0
        self._socks = []
        for address in (str(path), "\0" + self.abstract):
            s = socket.socket(socket.AF_UNIX)
            s.bind(address)
            s.listen()
            s.settimeout(0.2)
            self._socks.append(s)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            for s in self._socks:
                try:
                    conn, _ = s.accept()
                except OSError:
                    continue
                self.connections += 1
                conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for s in self._socks:
            s.close()


CONNECT = """
for name, address in [('path', SOCK), ('abstract', '\\0' + ABSTRACT)]:
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    try:
        s.connect(address)
        results[name] = 'connected'
    except OSError as e:
        results[name] = type(e).__name__
    finally:
        s.close()
results['env'] = sorted(k for k in ('SSH_AUTH_SOCK', 'TMUX', 'DBUS_SESSION_BUS_ADDRESS', 'MY_IDE_SOCK', 'SOME_VAR',
                                    'XDG_RUNTIME_DIR') if k in os.environ)
"""


@pytest.mark.case(79)
def test_a_test_cannot_reach_the_users_unix_sockets_or_see_variables_naming_them(tree, flow, monkeypatch):
    calc_repo(tree)
    server = Listener(tree.base / "run" / "user" / "agent.sock")
    try:
        for name, value in (("SSH_AUTH_SOCK", str(server.path)), ("TMUX", f"{server.path},4242,0"),
                            ("DBUS_SESSION_BUS_ADDRESS", f"unix:path={server.path}"), ("MY_IDE_SOCK", "x"),
                            ("SOME_VAR", str(server.path)), ("XDG_RUNTIME_DIR", str(server.path.parent))):
            monkeypatch.setenv(name, value)
        found = attack(tree, f"SOCK, ABSTRACT = {str(server.path)!r}, {server.abstract!r}\n{CONNECT}")
    finally:
        server.close()
    assert found["env"] == []
    assert found["path"] != "connected" and found["abstract"] != "connected", found
    assert server.connections == 0


@pytest.mark.case(79)
def test_without_the_sandbox_the_same_test_connects(tree):
    """The hole is real: with the sandbox off the same test reaches both sockets (by the path it knows)."""
    calc_repo(tree)
    server = Listener(tree.base / "run" / "user" / "agent.sock")
    try:
        with sandbox.override(False):
            found = attack(tree, f"SOCK, ABSTRACT = {str(server.path)!r}, {server.abstract!r}\n{CONNECT}")
    finally:
        server.close()
    assert found["path"] == "connected" and found["abstract"] == "connected"


@pytest.mark.case(79)
def test_clean_env_drops_every_way_into_the_session():
    sock_dir = Path(os.environ.get("TMPDIR", "/tmp")) / f"ph-sock-{uuid.uuid4().hex[:8]}"
    sock_dir.mkdir()
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(sock_dir / "s"))
    try:
        base = {"TMUX": "/tmp/tmux-1000/default,1,0", "TMUX_PANE": "%1", "STY": "1.pts-0", "SSH_AUTH_SOCK": "/x",
                "GPG_AGENT_INFO": "/x:0:1", "DBUS_SESSION_BUS_ADDRESS": "unix:path=/run/user/1000/bus",
                "DOCKER_HOST": "unix:///var/run/docker.sock", "WAYLAND_DISPLAY": "wayland-0", "DISPLAY": ":0",
                "VSCODE_IPC_HOOK_CLI": "/run/user/1000/vscode.sock", "KITTY_LISTEN_ON": "unix:/tmp/k",
                "ANY_NAME": str(sock_dir / "s"), "PATH": "/usr/bin", "LANG": "C.UTF-8", "PWD": "/w"}
        assert clean_env(base=base) == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "PWD": "/w"}
    finally:
        s.close()
        shutil.rmtree(sock_dir)


@pytest.mark.case(79)
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed here")
def test_a_repo_test_cannot_drive_the_users_tmux_server(tree, flow, monkeypatch):
    calc_repo(tree)
    sock = tree.base / "tmux" / "default"
    sock.parent.mkdir(mode=0o700)
    marker = tree.base / "tmux-ran"
    subprocess.run(["tmux", "-S", str(sock), "new-session", "-d", "-s", "ph", "sleep 600"], check=True, timeout=30)
    try:
        monkeypatch.setenv("TMUX", f"{sock},1,0")
        body = (f"done = subprocess.run(['tmux', '-S', {str(sock)!r}, 'run-shell', 'touch {marker}'],"
                " capture_output=True, text=True)\n"
                "results['exit'] = done.returncode\n"
                "results['tmux_env'] = 'TMUX' in os.environ\n")
        found = attack(tree, body)
        controlled = None
        with sandbox.override(False):  # the same test without the sandbox does run a command through the server
            attack(tree, body)
            controlled = marker.exists()
            marker.unlink(missing_ok=True)
    finally:
        subprocess.run(["tmux", "-S", str(sock), "kill-server"], capture_output=True, timeout=30)
    assert found["exit"] != 0 and found["tmux_env"] is False
    assert controlled is True
    assert not marker.exists()


def _libc():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    return libc


IPC = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
results['host_segment'] = libc.shmget(HOST_KEY, 0, 0) >= 0
results['made_segment'] = libc.shmget(OWN_KEY, 4096, 0o1000 | 0o600) >= 0
results['made_queue'] = libc.msgget(OWN_KEY, 0o1000 | 0o600) >= 0
results['made_semaphore'] = libc.semget(OWN_KEY, 1, 0o1000 | 0o600) >= 0
with open('/dev/shm/' + POSIX_NAME, 'w') as f:
    f.write('left behind?')
"""


@pytest.mark.case(80)
def test_the_sandbox_has_its_own_ipc_namespace_and_nothing_of_it_outlives_the_run(tree, flow):
    calc_repo(tree)
    libc = _libc()
    host_key, own_key = (int(uuid.uuid4().int % 0x7FFFFFF0) + 1 for _ in range(2))
    posix = f"ph-test-{uuid.uuid4().hex[:8]}"
    host = libc.shmget(host_key, 4096, IPC_CREAT | 0o600)
    assert host >= 0
    try:
        found = attack(tree, f"HOST_KEY, OWN_KEY, POSIX_NAME = {host_key}, {own_key}, {posix!r}\n{IPC}")
        left = {"segment": libc.shmget(own_key, 0, 0), "queue": libc.msgget(own_key, 0),
                "sem": libc.semget(own_key, 0, 0)}
    finally:
        libc.shmctl(host, IPC_RMID, None)
    assert found["host_segment"] is False
    assert found["made_segment"] and found["made_queue"] and found["made_semaphore"]  # made inside the sandbox...
    assert left == {"segment": -1, "queue": -1, "sem": -1}  # ...and gone with it
    assert not Path("/dev/shm", posix).exists()


@pytest.mark.case(80)
def test_without_the_sandbox_a_test_sees_the_hosts_segments(tree):
    calc_repo(tree)
    libc = _libc()
    host_key, own_key = (int(uuid.uuid4().int % 0x7FFFFFF0) + 1 for _ in range(2))
    posix = f"ph-test-{uuid.uuid4().hex[:8]}"
    host = libc.shmget(host_key, 4096, IPC_CREAT | 0o600)
    try:
        with sandbox.override(False):
            found = attack(tree, f"HOST_KEY, OWN_KEY, POSIX_NAME = {host_key}, {own_key}, {posix!r}\n{IPC}")
    finally:
        libc.shmctl(host, IPC_RMID, None)
        for made, remove in ((libc.shmget(own_key, 0, 0), lambda i: libc.shmctl(i, IPC_RMID, None)),
                             (libc.msgget(own_key, 0), lambda i: libc.msgctl(i, IPC_RMID, None)),
                             (libc.semget(own_key, 0, 0), lambda i: libc.semctl(i, 0, IPC_RMID))):
            if made >= 0:
                remove(made)
        Path("/dev/shm", posix).unlink(missing_ok=True)
    assert found["host_segment"] is True


TERMINALS = """
results['dev'] = sorted(os.listdir('/dev'))
results['pts'] = sorted(os.listdir('/dev/pts'))
for name, path in [('host_pty', HOST_PTY), ('tty', '/dev/tty'), ('console', '/dev/console')]:
    try:
        open(path, 'rb', buffering=0).close()
        results[name] = 'opened'
    except OSError as e:
        results[name] = type(e).__name__
master, slave = os.openpty()
results['own_pty'] = os.ttyname(slave).startswith('/dev/pts/')
"""


@pytest.mark.case(81)
def test_a_test_cannot_open_the_users_terminals(tree, flow):
    calc_repo(tree)
    master, slave = os.openpty()
    try:
        host_pty = os.ttyname(slave)
        found = attack(tree, f"HOST_PTY = {host_pty!r}\n{TERMINALS}")
    finally:
        os.close(master)
        os.close(slave)
    assert found["dev"] == ["fd", "full", "mqueue", "null", "ptmx", "pts", "random", "shm", "stderr", "stdin",
                            "stdout", "urandom", "zero"]
    assert host_pty.rsplit("/", 1)[1] not in found["pts"]
    assert found["host_pty"] != "opened" and found["tty"] != "opened" and found["console"] != "opened"
    assert found["own_pty"] is True  # a pty of its own still works (tests of terminal code)


KEYRING = """
import ctypes, json, sys
from pathlib import Path
from pyharness.workspace.procs import clean_env, run_once
from pyharness.workspace import sandbox
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
ADD_KEY, KEYCTL = {calls}
assert libc.syscall(KEYCTL, 1, None) >= 0  # KEYCTL_JOIN_SESSION_KEYRING: a new session keyring for this test
key = libc.syscall(ADD_KEY, b"user", b"ph-test-key", b"KEY-SECRET-42", 13, -3)
assert key >= 0, ctypes.get_errno()
probe = '''
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
found = libc.syscall({keyctl}, 10, -3, b"user", b"ph-test-key", 0)  # KEYCTL_SEARCH in the session keyring
buf = ctypes.create_string_buffer(64)
got = libc.syscall({keyctl}, 11, found, buf, 64) if found >= 0 else -1  # KEYCTL_READ
print(found >= 0, buf.value.decode())
'''
sandbox.set_enabled({on})
done = run_once([sys.executable, "-c", probe], cwd=Path({repo!r}), env=clean_env(), stdin="", timeout=60)
print(done.stdout.strip() or done.stderr.strip())
"""


@pytest.mark.case(81)
@pytest.mark.skipif(platform.machine() not in KEY_CALLS, reason="keyring calls are known for x86_64 and aarch64")
def test_a_test_cannot_read_the_session_keyring(tree):
    calls = KEY_CALLS[platform.machine()]
    outputs = {}
    for on in (True, False):
        script = textwrap.dedent(KEYRING).format(calls=calls, keyctl=calls[1], on=on, repo=str(tree.repo))
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                              cwd=Path(__file__).parents[2])
        outputs[on] = done.stdout.strip() or done.stderr.strip()
    assert outputs[True] == "False", outputs  # in the sandbox: not found (seccomp refuses the keyring calls)
    assert outputs[False] == "True KEY-SECRET-42", outputs  # without it the test reads the key


METADATA = """
for name, path in TARGETS.items():
    for what, call in [('chmod', lambda p: os.chmod(p, 0o777)), ('utime', lambda p: os.utime(p, (0, 0))),
                       ('xattr', lambda p: os.setxattr(p, 'user.ph', b'x')),
                       ('chown', lambda p: os.chown(p, os.getuid(), os.getgid()))]:
        try:
            call(path)
            results[name + ':' + what] = 'changed'
        except OSError as e:
            results[name + ':' + what] = type(e).__name__
"""


def _meta(path: Path) -> tuple:
    st = os.stat(path)
    try:
        xattrs = os.listxattr(path)
    except OSError:
        xattrs = []
    return st.st_mode, st.st_mtime_ns, st.st_uid, xattrs


@pytest.mark.case(82)
def test_metadata_outside_the_writable_set_cannot_change(tree, flow):
    calc_repo(tree)
    interpreter = Path(os.path.realpath(sys.executable))
    targets = {"outside": tree.outside / "secret.txt", "judge": tree.repo / "tests" / "test_calc.py",
               "git": tree.repo / ".git" / "config", "interpreter": interpreter}
    before = {name: _meta(path) for name, path in targets.items()}
    found = attack(tree, f"TARGETS = {({k: str(v) for k, v in targets.items()})!r}\n{METADATA}",
                   readonly=["tests/test_calc.py"])
    assert {k: v for k, v in found.items() if v == "changed"} == {}
    assert {name: _meta(path) for name, path in targets.items()} == before


@pytest.mark.case(82)
def test_without_the_sandbox_a_test_changes_metadata_outside(tree):
    calc_repo(tree)
    control = tree.base / "control.txt"
    control.write_text("x")
    with sandbox.override(False):
        found = attack(tree, f"TARGETS = {({'control': str(control)})!r}\n{METADATA}")
    assert found["control:chmod"] == "changed" and control.stat().st_mode & 0o777 == 0o777


ROOT = """
import time
try:
    open('/etc/shadow').read()
    results['shadow'] = 'read'
except OSError as e:
    results['shadow'] = type(e).__name__
results['uid'] = [os.getuid(), os.geteuid()]
forks = 0
try:
    for _ in range(100):
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        forks += 1
except OSError as e:
    results['fork_error'] = type(e).__name__
results['forks'] = forks
with open('made-inside.txt', 'w') as f:
    f.write('x')
"""


@pytest.mark.case(83)
def test_sandboxed_code_never_has_roots_privileges_and_its_process_limit_holds(tree, monkeypatch):
    """As root, ph's sandboxed code runs as nobody (65534); as anyone else, as that user. Either way root-only files
    stay closed, the process limit binds, and what it makes in the repo is the user's own file."""
    root = os.geteuid() == 0
    if root and not sandbox.support().drops_root:
        pytest.skip(f"this machine cannot drop root in the sandbox: {sandbox.support().notes}")
    calc_repo(tree)
    monkeypatch.setattr(sandbox, "LIMITS", {**sandbox.LIMITS, "nproc": 24})
    found = attack(tree, ROOT)
    assert found["shadow"] == "PermissionError"
    assert found["uid"] == [sandbox.DROP_TO["uid"] if root else os.getuid()] * 2
    assert found.get("fork_error") == "BlockingIOError" and found["forks"] < 24
    made = tree.repo / "made-inside.txt"
    assert made.stat().st_uid == os.geteuid() and made.read_text() == "x"  # the user's own file
