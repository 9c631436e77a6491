"""Fix jobs seeded into real projects (`ph eval mutants`): pinned sdists, single-site mutants, their own tests.

A job is one mutation (pyharness.evals.mutate) of one source module that makes at least one test of that module's
test file fail while the file still collects; the unmutated tree passes the same file (checked once per file),
so the reverse patch restores green. The job for `ph fix`: make that test file pass again without touching it.
Sources come from the package index on first use (`pip download`, sdists carry their tests), are checked
against a pinned sha256 and are never committed; the job list (evals/mutants/jobs.json) is.
"""

import hashlib
import json
import random
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pyharness.errors import UserError
from pyharness.evals.projects import LARGE_TREE, PROJECTS, fetch, sha256_of
from pyharness.evals.seeded import SeededJob
from pyharness.workspace.testrun import TestRun, run_pytest
from pyharness.workspace.tree import SKIP_DIRS


@dataclass
class MutantJob(SeededJob):
    """One sound mutant: where it is, what changed, which tests it breaks."""

    id: str
    project: str
    """A PROJECTS name, or 'local:PATH' for --from."""
    file: str
    line: int
    site: int
    operator: str
    description: str
    tests: list[str]
    """The test file(s) that judge the job (run by `ph fix` and by the score)."""
    failing: list[str]
    """Test ids the mutant fails."""
    source_sha256: str
    """sha256 of the unmutated file: a job never applies to a different version."""
    split: str = ""
    large: bool = False
    root: Path | None = field(default=None, repr=False, compare=False)
    """The unmutated tree (set when loaded)."""

    kind = "mutant"

    def to_json(self) -> dict:
        return {k: v for k, v in asdict(self).items() if k != "root"}

    def seed(self, tree: Path) -> None:
        apply(tree, self)


def split_of(job_id: str) -> str:
    """'dev' or 'test', by a stable hash of the id (about half each), so tuning never sees the reported jobs."""
    return "dev" if int(hashlib.sha256(job_id.encode()).hexdigest()[:8], 16) % 2 else "test"


def apply(tree: Path, job: MutantJob) -> None:
    """Mutate job.file in place; UserError when the file is not the version the job was built from."""
    from pyharness.evals.mutate import mutate

    path = tree / job.file
    if sha256_of(path) != job.source_sha256:
        raise UserError(f"{job.id}: {job.file} is not the source the mutant was made from (sha256 differs)")
    path.write_text(mutate(path.read_text(encoding="utf-8"), job.site), encoding="utf-8")


def judging_test_file(tree: Path, module: str) -> str | None:
    """The test file of a source module by the usual layouts (pkg/tests/test_m.py, tests/test_m.py, test/test_m.py)."""
    path = Path(module)
    name = f"test_{path.stem}.py"
    for candidate in (path.parent / "tests" / name, Path("tests") / name, Path("test") / name):
        if (tree / candidate).is_file():
            return candidate.as_posix()
    return None


def modules(tree: Path, packages: tuple[str, ...]) -> list[tuple[str, str]]:
    """(source module, its test file) pairs under the given package folders, sorted."""
    pairs = []
    for package in packages:
        for path in sorted((tree / package).rglob("*.py")):
            rel = path.relative_to(tree).as_posix()
            parts = rel.split("/")
            skipped = {"tests", "test", *SKIP_DIRS} & set(parts)
            if skipped or path.name.startswith("test_") or path.name == "conftest.py":
                continue
            test = judging_test_file(tree, rel)
            if test:
                pairs.append((rel, test))
    return pairs


def _run(tree: Path, test: str, timeout: float) -> TestRun:
    return run_pytest(tree, [test], timeout=timeout)


def build(tree: Path, project: str, packages: tuple[str, ...], *, per_module: int = 4, tries: int = 12,
          limit: int | None = None, seed: int = 0, timeout: float = 60.0, large: bool = False,
          progress=lambda text: None) -> list[MutantJob]:
    """Sound mutants of a tree: each breaks >= 1 test of its module's (otherwise green) test file and still collects."""
    from pyharness.evals.mutate import mutate, sites

    jobs: list[MutantJob] = []
    with tempfile.TemporaryDirectory(prefix="ph-mutants-") as tmp:
        work = Path(tmp) / "tree"
        shutil.copytree(tree, work, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".git"))
        green: dict[str, bool] = {}
        for module, test in modules(work, packages):
            if limit is not None and len(jobs) >= limit:
                break
            if test not in green:
                base = _run(work, test, timeout)
                green[test] = base.green
                progress(f"{test}: {'green' if base.green else 'not green: ' + base.summary()} (baseline)")
            if not green[test]:
                continue
            path = work / module
            original = path.read_text(encoding="utf-8")
            try:
                found = sites(original)
            except Exception as err:  # libcst's parser raises its own error types for syntax it does not know
                progress(f"{module}: skipped ({type(err).__name__})")
                continue
            order = random.Random(f"{seed}:{project}:{module}").sample(found, min(tries, len(found)))
            kept = 0
            for site in order:
                if kept >= per_module or (limit is not None and len(jobs) >= limit):
                    break
                path.write_text(mutate(original, site.index), encoding="utf-8")
                try:
                    run = _run(work, test, timeout)
                finally:
                    path.write_text(original, encoding="utf-8")
                if run.exit_code != 1 or not run.failing or run.timed_out or "error" in " ".join(run.counts):
                    continue
                dotted = module.removesuffix(".py").replace("/", ".")
                job_id = f"{project.removeprefix('local:')}-{dotted}-L{site.line}-s{site.index}"
                jobs.append(MutantJob(job_id, project, module, site.line, site.index, site.operator, site.description,
                                      [test], run.failing, hashlib.sha256(original.encode()).hexdigest(),
                                      split_of(job_id), large))
                kept += 1
                progress(f"{job_id}: {site.description}, {len(run.failing)} failing")
    return jobs


def check(job: MutantJob, timeout: float = 120.0) -> tuple[bool, str]:
    """A job is sound when its mutant fails >= 1 of its tests and the unmutated tree passes them all."""
    if job.root is None:
        return False, "project tree not loaded"
    with tempfile.TemporaryDirectory(prefix="ph-mcheck-") as tmp:
        work = Path(tmp) / "tree"
        try:
            job.make_repo(work)
        except (UserError, ValueError) as err:
            return False, str(err)
        broken = run_pytest(work, job.tests, timeout=timeout)
        (work / job.file).write_bytes((job.root / job.file).read_bytes())
        restored = run_pytest(work, job.tests, timeout=timeout)
    if broken.green or not broken.failing:
        return False, f"the mutant passes its tests ({broken.summary()})"
    if not restored.green:
        return False, f"the reverse patch does not restore green ({restored.summary()})"
    return True, f"mutant: {broken.summary()}; reverse: {restored.summary()}"


# -- the suite --------------------------------------------------------------------------------------------------------

def manifest_path() -> Path:
    from pyharness.evals.tasks import evals_dir

    return evals_dir() / "mutants" / "jobs.json"


def load_jobs(split: str = "test", cache: Path | None = None) -> list[MutantJob]:
    """The committed jobs of one split ('dev', 'test' or 'all'), their project trees fetched."""
    if split not in ("dev", "test", "all"):
        raise UserError(f"unknown mutant split {split!r}: use dev, test or all")
    data = json.loads(manifest_path().read_text(encoding="utf-8"))
    trees: dict[str, Path] = {}
    jobs = []
    for record in data["jobs"]:
        job = MutantJob(**record)
        if split != "all" and job.split != split:
            continue
        if job.project not in PROJECTS:
            raise UserError(f"{job.id}: unknown project {job.project!r}")
        if job.project not in trees:
            trees[job.project] = fetch(PROJECTS[job.project], cache)
        job.root = trees[job.project]
        jobs.append(job)
    return jobs


def local_jobs(path: Path, **build_args) -> list[MutantJob]:
    """Jobs built on the fly from a local project with a tests folder (`ph eval mutants --from PATH`)."""
    root = Path(path).expanduser().resolve()
    if not root.is_dir():
        raise UserError(f"--from {path}: not a folder")
    packages = tuple(sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "__init__.py").is_file()
                            and p.name not in ("tests", "test")))
    if not packages:
        packages = (".",)
    files = sum(1 for _ in root.rglob("*.py"))
    jobs = build(root, f"local:{root.name}", packages, large=files >= LARGE_TREE, **build_args)
    for job in jobs:
        job.root = root
    return jobs


def mutant_counts(jobs: list) -> list[str]:
    """One line per project (jobs, large tree or not) and one per split: what `--check` lists."""
    from collections import Counter

    mutants = [j for j in jobs if isinstance(j, MutantJob)]
    projects = Counter(j.project for j in mutants)
    large = {j.project for j in mutants if j.large}
    lines = [f"{name}: {n} jobs" + (" (large tree)" if name in large else "") for name, n in sorted(projects.items())]
    splits = Counter(j.split for j in mutants)
    lines.append(f"sound jobs: {len(mutants)} from {len(projects)} projects, {sum(j.large for j in mutants)} in a "
                 f"large tree; split: " + ", ".join(f"{k} {v}" for k, v in sorted(splits.items())))
    return lines
