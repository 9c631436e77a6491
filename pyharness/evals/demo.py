"""`ph demo`: the four first-run jobs on a fresh copy of demo/orders, each checked independently."""

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path, PurePosixPath

from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.runs import AgentConfig
from pyharness.loop.session import run_job
from pyharness.models.base import Model
from pyharness.runstate import RunResult
from pyharness.workspace.gitops import snapshot_repo
from pyharness.workspace.interpreter import Interpreter
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import SKIP_DIRS
from pyharness.workspace.treecopy import copy_tree


def demo_root() -> Path:
    """Where demo/ lives: inside the installed package, or next to it in a source checkout."""
    return Path(str(files("pyharness.demo_repo")))


def load_jobs(root: Path | None = None) -> list[dict]:
    """The demo's job descriptions (demo/jobs.json)."""
    return json.loads(((root or demo_root()) / "jobs.json").read_text(encoding="utf-8"))


@dataclass
class DemoOutcome:
    """One demo job: did the harness finish it, and did the independent check pass."""

    name: str
    result: RunResult
    ok: bool
    note: str


def make_repo(dest: Path, job: dict, root: Path | None = None, source: Path | None = None) -> Path:
    """A git-initialised copy of the job's repo (default demo/orders) with the job's seed applied. A job folder is
    untrusted input: its repo is copied without following links out of it (`treecopy.copy_tree` leaves them and
    special files out), and each seed patch writes only inside the copy (`seed_target`)."""
    source = source or (root or demo_root()) / "orders"
    if dest.exists():
        raise FileExistsError(f"{dest} exists")
    copy_tree(source, dest, skip=SKIP_DIRS)
    snapshot_repo(dest, "demo: clean")
    for patch in job.get("seed", []):
        apply_patch(dest, patch)
    return dest


def apply_patch(repo: Path, patch: dict) -> None:
    """Apply one {path, find, replace} text patch (an empty find creates the file) inside `repo`."""
    target = seed_target(repo, patch["path"])
    if not patch["find"]:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(patch["replace"], encoding="utf-8")
        return
    text = target.read_text(encoding="utf-8")
    if text.count(patch["find"]) != 1:
        raise ValueError(f"demo patch: {patch['find']!r} must occur once in {patch['path']}")
    target.write_text(text.replace(patch["find"], patch["replace"]), encoding="utf-8")


def job_path(rel: object, what: str) -> PurePosixPath:
    """A path a job file names (a seed patch's, a hidden test's, a test id's file), as data: a non-empty relative
    path with no `..`, no backslash or NUL, and nothing under `.git` in any spelling; a ValueError names the field."""
    if not isinstance(rel, str) or not rel.strip() or "\0" in rel or "\\" in rel:
        raise ValueError(f"{what} {rel!r} is not a relative path")
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"{what} {rel!r} leaves its folder (an absolute path or '..')")
    if any(part.lower().rstrip(". ") == ".git" for part in path.parts):
        raise ValueError(f"{what} {rel!r} is inside .git")
    return path


def seed_target(repo: Path, rel: object) -> Path:
    """The file a seed patch writes: `job_path` inside `repo`, reached through no symlink."""
    target = Path(repo)
    for part in job_path(rel, "seed path").parts:
        target = target / part
        if target.is_symlink():
            raise ValueError(f"seed path {rel!r} goes through a symlink ({target.relative_to(repo)})")
    return target


def job_file(folder: Path, rel: object, what: str) -> Path:
    """A file of a job folder (its hidden test): `job_path` inside `folder`, a regular file, no link on the way."""
    path = Path(folder)
    for part in job_path(rel, what).parts:
        path = path / part
        if path.is_symlink():
            raise ValueError(f"{what} {rel!r} is a symlink or goes through one")
    if not path.is_file():
        raise ValueError(f"{what} {rel!r} is not a file of the job folder")
    return path


def check(job: dict, repo: Path, result: RunResult, root: Path | None = None,
          source: Path | None = None) -> tuple[bool, str]:
    """The job's own check, independent of the harness's acceptance rule; a fix job is scored as a mutant is
    (`fixscore.score_fix`: its judging test files whole, byte-identical to the seeded repo's `source`)."""
    if result.outcome != "done":
        return False, result.reason
    if job["mode"] == "ask":
        answer = result.answer.lower()
        spec = job["check"]
        missing = [s for s in spec.get("answer_contains_all", []) if s.lower() not in answer]
        anyof = spec.get("answer_contains_any", [])
        if missing or (anyof and not any(s.lower() in answer for s in anyof)):
            return False, f"answer lacks {missing or anyof}: {result.answer[:80]}"
        return True, result.answer.strip().splitlines()[0][:80]
    if job["mode"] == "fix":
        from pyharness.evals.fixscore import score_fix

        return score_fix(job, repo, source or (root or demo_root()) / "orders")
    hidden = job_file(root or demo_root(), job["hidden_test"], "hidden_test")
    dest = repo / "tests" / hidden.name
    shutil.copy2(hidden, dest)
    run = run_pytest(repo, [f"tests/{hidden.name}"])
    return run.green, f"hidden check: {run.summary()}"


def run_demo(model: Model, *, harness: HarnessConfig | None = None, config: AgentConfig | None = None,
             only: list[str] | None = None, emit: Callable[..., None] | None = None,
             announce: Callable[[str], None] = lambda text: None, keep: Path | None = None,
             python: Interpreter | None = None) -> list[DemoOutcome]:
    """Run the demo jobs in order on fresh copies; returns one outcome per job."""
    outcomes = []
    base = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="ph-demo-"))
    try:
        for job in load_jobs():
            if only and job["name"] not in only:
                continue
            announce(f"{job['name']}: {job['task'] or 'make the failing tests pass'}")
            repo = make_repo(base / job["name"], job)
            result = run_job(repo, job["mode"], job["task"], model, harness=harness, config=config, emit=emit,
                             python=python)
            ok, note = check(job, repo, result)
            outcomes.append(DemoOutcome(job["name"], result, ok, note))
    finally:
        if keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return outcomes
