"""Task folders for Ray workers on other machines. A job's folder (its repo/ and hidden tests) or a mutant's project
tree lives on the driver's disk; on a cluster of several machines the driver packs each such folder once into Ray's
object store, and a worker unpacks it once per machine (under the system temp folder, by the bundle's sha256) and
runs the task from there. A worker on the driver's own machine uses the folders where they are."""

import gzip
import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from pyharness.evals.mutants import MutantJob
from pyharness.evals.tasks import JobTask, Task
from pyharness.workspace.tree import SKIP_DIRS


def task_folder(task: Task) -> Path | None:
    """The folder a task's runs read from (a job's folder, a mutant's project tree); None for a stdout task."""
    if isinstance(task, JobTask):
        if task.source is not None and not task.source.is_relative_to(task.root):
            raise ValueError(f"{task.id}: its repo {task.source} is outside its folder {task.root}")
        return task.root
    if isinstance(task, MutantJob):
        return task.root
    return None


def pack(folder: Path) -> tuple[str, bytes]:
    """(sha256, bytes) of a gzipped tar of the folder, caches and VCS folders left out, in a stable order."""
    buffer = io.BytesIO()
    # mtime 0 in the gzip header and in each entry: the same folder packs to the same bytes (and digest) every time
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0) as packed, tarfile.open(fileobj=packed, mode="w") as tar:
        for path in sorted(folder.rglob("*")):
            rel = path.relative_to(folder)
            if SKIP_DIRS & set(rel.parts) or path.is_dir() and not path.is_symlink():
                continue
            info = tar.gettarinfo(str(path), arcname=rel.as_posix())
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "", ""
            if info.isfile():
                with path.open("rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    data = buffer.getvalue()
    return hashlib.sha256(data).hexdigest(), data


def unpack(digest: str, fetch: Callable[[], bytes], into: Path | None = None) -> Path:
    """The folder a bundle unpacks to: made once per machine (written beside, then renamed into place); `fetch`
    gets the bundle's bytes only when this machine does not have it yet."""
    home = into or Path(tempfile.gettempdir()) / "ph-ray-bundles"
    dest = home / digest
    if dest.is_dir():
        return dest
    data = fetch()
    if hashlib.sha256(data).hexdigest() != digest:
        raise ValueError(f"bundle {digest[:12]} arrived damaged (its sha256 differs)")
    home.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{digest[:12]}-", dir=home))
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        tar.extractall(staging, filter="data")  # no absolute paths, no links out of the folder
    try:
        os.rename(staging, dest)
    except OSError:  # another worker on this machine unpacked the same bundle first
        shutil.rmtree(staging, ignore_errors=True)
    return dest


def relocate(task: Task, folder: Path) -> Task:
    """The task with its folder moved to `folder` (where its bundle was unpacked)."""
    if isinstance(task, JobTask):
        source = folder / task.source.relative_to(task.root) if task.source is not None else None
        return replace(task, root=folder, source=source)
    if isinstance(task, MutantJob):
        return replace(task, root=folder)
    return task
