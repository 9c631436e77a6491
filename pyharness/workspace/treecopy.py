"""Copies of a repo tree (scratch copies for candidates, add mode's original and trial trees) that stay inside it.

`shutil.copytree` follows symlinks: `zero.bin -> /dev/zero` would be read until the disk is full, `x -> ../outside`
copies a folder from outside the repo into the copy that the tests then read, and `up -> ..` recurses. Here a
symlink is recreated only when it points to a file or folder inside the tree (as a relative link, so it points
inside the copy too); every other link, and anything that is not a regular file or a folder (FIFOs, devices,
sockets), is left out (docs/safety-cases.md case 66).
"""

import os
import shutil
import stat
from collections.abc import Iterable
from pathlib import Path


def copy_tree(src: Path, dst: Path, skip: Iterable[str] = ()) -> list[str]:
    """Copy `src` into `dst` (created if absent); names in `skip` are left out at any depth. Returns the relative
    paths left out because they were links out of the tree or special files."""
    src, skipped, left_out = src.resolve(), set(skip), []
    dst.mkdir(parents=True, exist_ok=True)
    for folder, dirs, files in os.walk(src):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d not in skipped)
        target_dir = dst / here.relative_to(src)
        for name in [*dirs, *sorted(f for f in files if f not in skipped)]:
            path, out = here / name, target_dir / name
            rel = str(path.relative_to(src))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                if not _link_inside(src, path, out):
                    left_out.append(rel)
                if name in dirs:
                    dirs.remove(name)  # os.walk does not descend into links; the link itself is made above
            elif stat.S_ISDIR(st.st_mode):
                out.mkdir(exist_ok=True)
            elif stat.S_ISREG(st.st_mode):
                shutil.copy2(path, out, follow_symlinks=False)
            else:
                left_out.append(rel)
    return left_out


def _link_inside(root: Path, link: Path, out: Path) -> bool:
    """Recreate `link` at `out` when it leads (through any chain of links) to a file or folder inside `root`."""
    try:
        real = link.resolve(strict=True)
    except (OSError, RuntimeError):  # dangling, or a loop
        return False
    if real == root or root not in real.parents:
        return False  # outside, or the tree itself (`up -> .`)
    if not (real.is_file() or real.is_dir()):
        return False
    if real.is_dir() and (link.parent.resolve() == real or real in link.parent.resolve().parents):
        return False  # a link to a folder that holds it: a copy would recurse through it
    os.symlink(os.path.relpath(real, link.parent.resolve()), out)
    return True
