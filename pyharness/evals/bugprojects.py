"""The projects real bugs come from (`ph eval bugs`): pinned releases fetched from the package index, and one cached
virtualenv per project holding its runtime and test dependencies, whose python runs the project's tests.

Everything here lives in the user cache (never in the repo): `CACHE/bugs/NAME-VERSION/` is an unpacked sdist checked
against its pinned sha256, `CACHE/bugs/venvs/NAME-HASH/` a venv built from the pinned requirements (HASH names the
list, so a changed list builds a new venv). A venv is marked complete only after every install succeeded.
"""

import fcntl
import hashlib
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.errors import UserError
from pyharness.evals.projects import Project, unpack

PYTEST = "pytest==8.4.2"
"""The pytest every project venv gets (pinned: a job's verdict must not move with a new pytest)."""


@dataclass(frozen=True)
class BugProject:
    """A project whose history gave bug jobs: its licence, where its history is, what its tests need, its split."""

    name: str
    """The distribution's name on the package index."""
    license: str
    repository: str
    split: str
    """'dev' or 'test': every job of a project is in its split (tuning never reads a test project)."""
    deps: tuple[str, ...] = ()
    """Pinned runtime dependencies (`name==version`)."""
    test_deps: tuple[str, ...] = ()
    """Pinned packages its tests need beyond pytest (plugins, hypothesis, ...)."""
    releases: dict[str, str] = field(default_factory=dict)
    """version -> sha256 of its sdist, for every release a job uses."""

    @property
    def requirements(self) -> list[str]:
        """What its venv gets, in install order."""
        return [*self.deps, *self.test_deps, PYTEST]

    def release(self, version: str) -> Project:
        """A pinned release as `projects.Project` (so it is fetched and unpacked as the mutants' sdists are)."""
        if version not in self.releases:
            raise UserError(f"{self.name} {version} is not a pinned release of the bugs manifest")
        return Project(self.name, version, self.releases[version], self.license, (), 0)


def cache_root() -> Path:
    """Where bug projects' sdists and venvs live (never in the repo)."""
    from pyharness.models.packs import cache_dir

    return cache_dir() / "bugs"


def download_sdist(name: str, version: str, dest: Path) -> Path:
    """`pip download` the sdist of NAME==VERSION into `dest`; UserError when the index has none."""
    dest.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:",
         "--disable-pip-version-check", "-d", str(dest), f"{name}=={version}"],
        capture_output=True, text=True, timeout=600, check=False)
    archives = sorted(p for p in dest.iterdir() if p.name.endswith((".tar.gz", ".zip")))
    if done.returncode != 0 or not archives:
        last = (done.stderr.strip().splitlines() or ["no sdist downloaded"])[-1]
        raise UserError(f"cannot fetch {name} {version} (pip download failed: {last})")
    return archives[0]


def fetch_release(project: BugProject, version: str, cache: Path | None = None) -> Path:
    """The unpacked sdist of one pinned release, downloaded and checked on first use."""
    release = project.release(version)
    cache = cache or cache_root()
    tree = cache / release.key
    if (tree / ".ph-verified").is_file():
        return tree
    with _locked(cache / f".{release.key}.lock"):
        if (tree / ".ph-verified").is_file():
            return tree
        with tempfile.TemporaryDirectory(dir=cache, prefix=".fetch-") as tmp:
            return unpack(download_sdist(project.name, version, Path(tmp)), release, cache)


def venv_dir(project: BugProject, cache: Path | None = None) -> Path:
    digest = hashlib.sha256("\n".join([sys.version.split()[0], *project.requirements]).encode()).hexdigest()[:12]
    return (cache or cache_root()) / "venvs" / f"{project.name}-{digest}"


def venv_python(project: BugProject, cache: Path | None = None) -> str:
    """The python of the project's venv (its requirements installed), built on first use and then reused."""
    venv = venv_dir(project, cache)
    python = venv / "bin" / "python"
    marker = venv / ".ph-complete"
    if marker.is_file():
        return str(python)
    with _locked(venv.parent / f".{venv.name}.lock"):
        if marker.is_file():
            return str(python)
        _run([sys.executable, "-m", "venv", "--clear", str(venv)], f"cannot create a venv for {project.name}")
        _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *project.requirements],
             f"cannot install {project.name}'s test requirements")
        marker.write_text("\n".join(project.requirements) + "\n", encoding="utf-8")
    return str(python)


def _run(cmd: list[str], what: str) -> None:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, check=False)
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise UserError(f"{what}: {last}")


class _locked:
    """An exclusive lock file: two processes (or check threads) never build the same sdist or venv at once."""

    def __init__(self, path: Path):
        self.path = path

    def __enter__(self):
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path, "w")  # noqa: SIM115 (held until __exit__)
        fcntl.flock(self.handle, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        fcntl.flock(self.handle, fcntl.LOCK_UN)
        self.handle.close()
