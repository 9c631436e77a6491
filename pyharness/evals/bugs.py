"""Real bugs from projects' histories (`ph eval bugs`): a fix commit's regression test, the fix reverted as the seed.

A job is rebuilt from the package index alone. Its tree is the sdist of the first release after the fix (V1: the
fixed code and the regression test). The seed puts back the pre-fix text: for each hunk, lines [a, b) of the file in
V1 are replaced by lines [c, d) of the same file in the release before the fix (V0). The manifest
(evals/bugs/jobs.json, written by evals/bugs/build.py) holds only coordinates, hashes, test ids and the commit's
name and numbers, never code. The tree is a release tree, not the tree at the fix commit: later changes released in
V1 are in it too. The judge is the commit's test file(s) as released in V1, run by the project's venv python.
"""

import hashlib
import json
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyharness.errors import UserError
from pyharness.evals.bugprojects import BugProject, fetch_release, venv_python
from pyharness.evals.projects import sha256_of
from pyharness.evals.seeded import SeededJob
from pyharness.workspace.testrun import run_pytest

CHECK_TIMEOUT = 180.0
"""Seconds one judging test run may take in `--check` (and in the build)."""


@dataclass(frozen=True)
class Hunk:
    """One hunk of the seed: lines [new[0], new[1]) of `file` in V1 become lines [old[0], old[1]) of it in V0."""

    file: str
    new: tuple[int, int]
    old: tuple[int, int]


@dataclass
class BugJob(SeededJob):
    """One sound real bug: the releases around its fix, the seed's hunks, the tests that judge it, its source."""

    id: str
    project: str
    old: str
    """V0: the release before the fix (the seed's text comes from it)."""
    new: str
    """V1: the first release with the fix (the job's tree)."""
    hunks: list[Hunk]
    clean_sha256: dict[str, str]
    """sha256 of each seeded file as V1 ships it."""
    seeded_sha256: dict[str, str]
    """sha256 of each seeded file after the seed."""
    tests: list[str]
    """The test file(s) the fix commit added or changed, as V1 ships them: they judge the job."""
    failing: list[str]
    """Test ids the seeded tree fails (and the clean tree passes)."""
    source: dict
    """The fix commit: repository, commit, subject, hunks, changed lines (added, removed): names and numbers only."""
    split: str = ""
    root: Path | None = field(default=None, repr=False, compare=False)
    """V1's unpacked sdist (set when loaded)."""
    old_root: Path | None = field(default=None, repr=False, compare=False)
    """V0's unpacked sdist (set when loaded)."""
    python: str | None = field(default=None, repr=False, compare=False)
    """The project venv's python, which runs the job's tests (set when loaded)."""

    def __post_init__(self):
        self.hunks = [h if isinstance(h, Hunk) else Hunk(h["file"], tuple(h["new"]), tuple(h["old"]))
                      for h in self.hunks]

    kind = "bug"

    @property
    def large(self) -> bool:
        return False

    @property
    def multi(self) -> bool:
        """A fix of more than one line on either side, or of more than one hunk (issue 37's 40% target)."""
        return self.source["hunks"] > 1 or max(self.source["added"], self.source["removed"]) > 1

    def to_json(self) -> dict:
        record = {k: v for k, v in asdict(self).items() if k not in ("root", "old_root", "python")}
        record["hunks"] = [{"file": h.file, "new": list(h.new), "old": list(h.old)} for h in self.hunks]
        return record

    def seed(self, tree: Path) -> None:
        if self.old_root is None:
            raise UserError(f"{self.id}: its releases are not loaded")
        seed(tree, self.old_root, self)


def seed(tree: Path, old_tree: Path, job: BugJob) -> None:
    """Put the pre-fix text back into `tree`: each hunk's V1 lines replaced by its V0 lines, the files checked
    against the manifest's sha256 before and after (UserError when a release is not the one the job was built on)."""
    for rel in sorted({h.file for h in job.hunks}):
        path, old_path = tree / rel, old_tree / rel
        if sha256_of(path) != job.clean_sha256.get(rel):
            raise UserError(f"{job.id}: {rel} is not the file the job was built on (sha256 differs)")
        if not old_path.is_file():
            raise UserError(f"{job.id}: {rel} is missing from {job.project} {job.old}")
        lines = path.read_bytes().splitlines(keepends=True)
        old_lines = old_path.read_bytes().splitlines(keepends=True)
        for hunk in sorted((h for h in job.hunks if h.file == rel), key=lambda h: h.new, reverse=True):
            lines[hunk.new[0]:hunk.new[1]] = old_lines[hunk.old[0]:hunk.old[1]]
        data = b"".join(lines)
        if hashlib.sha256(data).hexdigest() != job.seeded_sha256.get(rel):
            raise UserError(f"{job.id}: the seeded {rel} is not the one the job was built with (sha256 differs)")
        path.write_bytes(data)


def check(job: BugJob, timeout: float = CHECK_TIMEOUT) -> tuple[bool, str]:
    """A job is sound when V1's tree passes its tests and the seeded tree fails exactly the listed ones."""
    if job.root is None:
        return False, "releases not loaded"
    with tempfile.TemporaryDirectory(prefix="ph-bcheck-") as tmp:
        work = Path(tmp) / "tree"
        try:
            job.make_repo(work)
        except (UserError, ValueError) as err:
            return False, str(err)
        seeded = run_pytest(work, job.tests, timeout=timeout, python=job.python)
        for rel in job.clean_sha256:
            (work / rel).write_bytes((job.root / rel).read_bytes())
        clean = run_pytest(work, job.tests, timeout=timeout, python=job.python)
    if clean.timed_out or seeded.timed_out:
        return False, f"timed out ({timeout:.0f} s)"
    if not clean.green:
        return False, f"the fixed tree is not green ({clean.summary()})"
    if sorted(seeded.failing) != sorted(job.failing):
        return False, f"the seeded tree does not fail exactly the {len(job.failing)} listed tests ({seeded.summary()})"
    return True, f"seeded: {seeded.summary()}; fixed: {clean.summary()}"


# -- the suite --------------------------------------------------------------------------------------------------------

def manifest_path() -> Path:
    from pyharness.evals.tasks import evals_dir

    return evals_dir() / "bugs" / "jobs.json"


def read_manifest(path: Path | None = None) -> tuple[dict[str, BugProject], list[BugJob]]:
    """The projects and jobs of the manifest, nothing fetched."""
    data = json.loads((path or manifest_path()).read_text(encoding="utf-8"))
    projects = {}
    for name, spec in data["projects"].items():
        projects[name] = BugProject(name, spec["license"], spec["repository"], spec["split"],
                                    tuple(spec["deps"]), tuple(spec["test_deps"]), dict(spec["releases"]))
    return projects, [BugJob(**record) for record in data["jobs"]]


def load_jobs(split: str = "test", cache: Path | None = None, path: Path | None = None) -> list[BugJob]:
    """The jobs of one split ('dev', 'test' or 'all'), their releases fetched and their project venvs built."""
    if split not in ("dev", "test", "all"):
        raise UserError(f"unknown bugs split {split!r}: use dev, test or all")
    projects, jobs = read_manifest(path)
    chosen = []
    for job in jobs:
        if split != "all" and job.split != split:
            continue
        if job.project not in projects:
            raise UserError(f"{job.id}: unknown project {job.project!r}")
        project = projects[job.project]
        job.root = fetch_release(project, job.new, cache)
        job.old_root = fetch_release(project, job.old, cache)
        job.python = venv_python(project, cache)
        chosen.append(job)
    return chosen


def bug_counts(jobs: list, dropped: list[str] = (), projects: dict[str, BugProject] | None = None) -> list[str]:
    """What `--check` prints: one line per project, the totals (sound jobs, projects, projects with dependencies,
    the share of multi-line or multi-hunk fixes, per split) and the dropped jobs by kind of reason."""
    from collections import Counter

    if projects is None:
        projects = read_manifest()[0]
    bugs = [j for j in jobs if isinstance(j, BugJob)]
    per = Counter(j.project for j in bugs)
    lines = [f"{name} ({projects[name].split}): {n} jobs" for name, n in sorted(per.items())]
    with_deps = sorted(n for n in per if projects[n].deps)
    multi = sum(j.multi for j in bugs)
    splits = Counter(j.split for j in bugs)
    lines.append(f"sound jobs: {len(bugs)} from {len(per)} projects, {len(with_deps)} with dependencies; "
                 f"multi-line or multi-hunk: {multi} ({100 * multi / max(len(bugs), 1):.0f}%); split: "
                 + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())))
    if dropped:
        kinds = Counter(_drop_kind(note) for note in dropped)
        lines.append(f"dropped: {len(dropped)} (" + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())) + ")")
    return lines


def _drop_kind(note: str) -> str:
    """The kind of a check failure, for the dropped line: a flaky or network-bound job shows as one of these."""
    for marker, kind in (("timed out", "timed out"), ("not green", "fixed tree not green"),
                         ("does not fail exactly", "seeded failing differs"), ("sha256", "release differs")):
        if marker in note:
            return kind
    return "other"
