"""Fix jobs seeded into a project's tree (`ph eval mutants`' mutants, `ph eval bugs`' real bugs): what both share.

The task as a user would ask it, a fresh git repo of the tree with the seed applied, and what a run left there: the
judging test files run whole (by the job's python), counted against what the seeded tree failed, and compared byte
for byte with the tree's own.
"""

import shutil
from pathlib import Path

from pyharness.errors import UserError
from pyharness.evals.projects import sha256_of
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import SKIP_DIRS


class SeededJob:
    """What a seeded fix job does with its fields: the dataclass that uses it gives `id`, `tests` (the judging test
    files), `failing` (the ids the seeded tree fails) and `root` (the unseeded tree, once loaded), and `seed`."""

    id: str
    tests: list[str]
    failing: list[str]
    root: Path | None
    python: str | None = None
    """The interpreter that runs the job's tests (None: ph's own)."""
    kind = "seeded"
    """How the repo's one commit names the job ('mutant', 'bug')."""

    @property
    def task(self) -> str:
        """What `ph fix` is asked, as a user would ask it."""
        return f"Make the failing tests in {', '.join(self.tests)} pass: fix the bug in the code, not the tests."

    def seed(self, tree: Path) -> None:
        """Put the job's bug into `tree`, a copy of `root` (UserError when the tree is not the one it was built on)."""
        raise NotImplementedError

    def make_repo(self, repo: Path) -> Path:
        """A fresh git repo: the unseeded tree with the seed applied, as one commit."""
        from pyharness.workspace import gitops

        if self.root is None:
            raise UserError(f"{self.id}: its project tree is not loaded")
        shutil.copytree(self.root, repo, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", ".git", ".ph-verified"))
        self.seed(repo)
        gitops.snapshot_repo(repo, f"{self.kind} {self.id}")
        return repo

    def test_hashes(self) -> dict[str, str]:
        """sha256 of each judging test file in the unseeded tree (a seed never touches a test file)."""
        return {t: sha256_of(self.root / t) for t in self.tests} if self.root else {}

    def score(self, repo: Path, test_hashes: dict[str, str]) -> tuple[bool, str]:
        """Every judging test passes and the test files are byte-identical."""
        left = self.left(repo, test_hashes)
        return left["green"], left["note"]

    def left(self, repo: Path, test_hashes: dict[str, str]) -> dict:
        """What a run left in `repo` (`left_in`)."""
        return left_in(repo, self.tests, self.failing, test_hashes, python=self.python)


def left_in(repo: Path, tests: list[str], failing: list[str], test_hashes: dict[str, str],
            python: str | None = None) -> dict:
    """What a run left in a fix job's repo, judged by its test files run by `python` (None: ph's own): green, how
    many tests fail against how many the seeded tree (`failing`) failed, `worse` when more fail, the files no longer
    run to pytest's end, or a test file changed, and `changed`: the files that differ from the seeded commit. A run
    that changed nothing left the seeded tree itself, so it is never worse: more failing then comes from a test that
    is not deterministic (one that draws random data can fail where the job was built passing it)."""
    changed = edited_files(repo)
    tests_changed = [t for t, h in test_hashes.items() if sha256_of(repo / t) != h]
    if tests_changed:
        return {"green": False, "note": f"test files changed: {', '.join(tests_changed)}", "failing": None,
                "before": len(failing), "worse": True, "changed": changed}
    run = run_pytest(repo, tests, timeout=300, python=python, readonly=tests)  # read-only, compiled from source
    ran = run.exit_code in (0, 1) and run.reported and not run.timed_out
    return {"green": run.green, "note": f"{', '.join(tests)}: {run.summary()}", "failing": len(run.failing),
            "before": len(failing), "changed": changed,
            "worse": changed != [] and (not ran or len(run.failing) > len(failing))}


def edited_files(repo: Path) -> list[str] | None:
    """Files in the job's repo that differ from its one commit (the seeded tree), leaving out ph's records and the
    caches tools write (SKIP_DIRS); None when git cannot say."""
    from pyharness.workspace import gitops

    try:
        out = gitops.run(repo, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames",
                          "--ignore-submodules=all", timeout=60)
    except gitops.GitError:
        return None
    names = [entry[3:] for entry in out.split("\0") if len(entry) > 3]
    return sorted(n for n in names if not SKIP_DIRS & set(n.split("/")))
