"""What ph knows about each file of a tree, keyed by the file's stat: text or binary, a digest of its bytes, and
values derived from its text (identifier words for ranking). A file is read again only when its stat changes, so
the per-step state hash of a 2,000-file tree stats every file and reads only the changed ones.

The stat key is (size, mtime, ctime, inode): ph's own writes replace a file by rename (a new inode), and any
write moves ctime. On a filesystem with a coarse clock, a file changed twice within one tick could keep its stat,
so an entry read less than `RACY_NS` after the file's mtime is not trusted and the file is read again next time
(git's "racily clean" rule).
"""

import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

RACY_NS = 2_000_000_000
SNIFF_BYTES = 8192
"""A file with a NUL byte in its first SNIFF_BYTES is binary."""


@dataclass
class Entry:
    """One file as last read."""

    signature: tuple[int, int, int, int]
    binary: bool
    digest: bytes
    """sha256 of the bytes; for a file over the size limit, of its signature (it is never read whole)."""
    trusted: bool
    derived: dict[str, object] = field(default_factory=dict)


class TreeCache:
    """Per-file facts of one tree, refreshed by stat."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.reads = 0
        """Files opened so far (a benchmark and test figure)."""
        self._entries: dict[str, Entry] = {}

    def entry(self, real: Path) -> Entry | None:
        """The facts of a regular file, read only when its stat changed; None when it is not a regular file."""
        try:
            info = os.stat(real)
        except OSError:
            return None
        if not stat.S_ISREG(info.st_mode):
            return None
        signature = (info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino)
        key = str(real)
        known = self._entries.get(key)
        if known is not None and known.signature == signature and known.trusted:
            return known
        try:
            binary, digest = self._read(real, info.st_size, signature)
        except OSError:
            self._entries.pop(key, None)
            return Entry(signature, True, b"", False)  # unreadable: treated as binary (never listed), not cached
        fresh = Entry(signature, binary, digest, time.time_ns() - info.st_mtime_ns > RACY_NS)
        self._entries[key] = fresh
        return fresh

    def derive(self, real: Path, name: str, compute: Callable[[str], object]) -> object:
        """compute(text of the file), remembered until the file changes; None for a binary or missing file."""
        known = self.entry(real)
        if known is None or known.binary:
            return None
        if name not in known.derived:
            size = known.signature[0]
            text = "" if size > self.max_bytes else self._text(real)
            known.derived[name] = compute(text)
        return known.derived[name]

    def forget(self, real: Path) -> None:
        """Drop what is known of a file (ph just wrote it)."""
        self._entries.pop(str(real), None)

    def _read(self, real: Path, size: int, signature: tuple) -> tuple[bool, bytes]:
        self.reads += 1
        with _open_regular(real) as f:
            if size > self.max_bytes:
                return b"\0" in f.read(SNIFF_BYTES), hashlib.sha256(repr(signature).encode()).digest()
            data = f.read()
        return b"\0" in data[:SNIFF_BYTES], hashlib.sha256(data).digest()

    def _text(self, real: Path) -> str:
        self.reads += 1
        try:
            with _open_regular(real) as f:
                return f.read().decode("utf-8", errors="replace")
        except OSError:
            return ""


def _open_regular(real: Path):
    """The file opened for reading, never blocking: a FIFO swapped in after the stat is refused, not waited on."""
    f = open(real, "rb", opener=lambda path, flags: os.open(path, flags | os.O_NONBLOCK))  # noqa: SIM115 - returned
    if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
        f.close()
        raise OSError(f"{real} is not a regular file")
    return f
