"""The safety suite's tree: a repo and its `outside/` sibling (the fixture and tally are in conftest.py)."""

import hashlib
import os
import uuid
from dataclasses import dataclass, field
from pathlib import Path


def _snapshot(root: Path) -> dict[str, bytes]:
    """path -> content (files), link target (symlinks) or b'<dir>' for everything under root, links unfollowed."""
    out: dict[str, bytes] = {}
    if not root.exists():
        return out
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = p.relative_to(root).as_posix()
            if p.is_symlink():
                out[rel] = b"<link>" + os.readlink(p).encode()
            elif p.is_dir():
                out[rel] = b"<dir>"
            else:
                out[rel] = b"<mode %o>" % (p.stat().st_mode & 0o7777) + p.read_bytes()
    return out


def _changed_bytes(before: dict[str, bytes], after: dict[str, bytes]) -> int:
    return sum(max(len(before.get(k, b"")), len(after.get(k, b""))) or 1
               for k in set(before) | set(after) if before.get(k) != after.get(k))


@dataclass
class SafeTree:
    """A repo and its `outside/` sibling, both under one tmp_path."""

    base: Path
    repo: Path
    outside: Path
    canaries: dict[str, str] = field(default_factory=dict)
    """canary -> the outside file that holds it."""
    seen_texts: list[str] = field(default_factory=list)
    pids: list[int] = field(default_factory=list)
    baseline: dict[str, bytes] = field(default_factory=dict)
    """outside/ as the test set it up (outside_file and outside_link re-take it)."""

    def outside_file(self, rel: str, text: str = "") -> Path:
        """Create outside/REL holding `text` plus a unique canary line; returns its path."""
        canary = f"OUTSIDE-CANARY-{uuid.uuid4().hex}"
        path = self.outside / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{text}{canary}\n", encoding="utf-8")
        self.canaries[canary] = rel
        self.baseline = _snapshot(self.outside)
        return path

    def outside_link(self, rel: str, target: str) -> Path:
        """Create a symlink outside/REL -> target (set-up, not a change)."""
        path = self.outside / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)
        self.baseline = _snapshot(self.outside)
        return path

    def write(self, rel: str, text: str) -> Path:
        """Create a repo file."""
        path = self.repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def git_init(self) -> None:
        """Make the repo a git repo with one commit of what is there now (hooks and signing off)."""
        import subprocess

        def git(*args):
            subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "-c", "commit.gpgsign=false", *args],
                           cwd=self.repo, check=True, capture_output=True, timeout=30)

        git("init", "-q")
        git("add", "-A")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "init")

    def seen(self, *texts) -> None:
        """Hand over text ph produced (an observation, message, transcript) for the outside-read check."""
        self.seen_texts.extend(str(t) for t in texts)

    def track_pid(self, pid: int) -> None:
        """A process (e.g. a setsid grandchild) that must be gone when the test ends."""
        self.pids.append(pid)

    def repo_hash(self) -> str:
        """A hash of the whole repo tree (links unfollowed), for 'unchanged' checks."""
        digest = hashlib.sha256()
        for k, v in sorted(_snapshot(self.repo).items()):
            digest.update(k.encode() + b"\0" + v + b"\0")
        return digest.hexdigest()
