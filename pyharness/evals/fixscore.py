"""How a fix job of the jobs suite (and of a folder of your own jobs) is scored: as a mutant job is. Its judging test
files, the files of its `check.tests_pass` ids, run whole (a fix that makes the listed test pass but breaks another
test of the file fails), and they must be byte-identical to the seeded repo's before and after that run (a fix that
edits a test file, or whose code rewrites one while the tests run, fails). The same for every configuration,
oneshot included. Until this module, only the listed ids ran and nothing compared the test files."""

import hashlib
from pathlib import Path

from pyharness.workspace.testrun import run_pytest

SCORE_TIMEOUT = 300.0
"""Seconds the scoring test run may take (as for mutant jobs: a score must not fail on time)."""


def judging_files(job: dict) -> list[str]:
    """The test files that judge a fix job: the file part of each `check.tests_pass` id, in order, once each."""
    return list(dict.fromkeys(node.split("::")[0] for node in job["check"]["tests_pass"]))


def seeded_hashes(job: dict, source: Path) -> dict[str, str]:
    """sha256 of each judging file as a run's repo starts: the file in `source` with the job's seed applied."""
    hashes = {}
    for rel in judging_files(job):
        path = source / rel
        patches = [p for p in job.get("seed", []) if p["path"] == rel]
        if not patches:  # copied byte for byte into the run's repo
            hashes[rel] = _digest(path)
            continue
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        for patch in patches:  # as demo.apply_patch writes them: text in, text out
            text = text.replace(patch["find"], patch["replace"], 1) if patch["find"] else patch["replace"]
        hashes[rel] = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return hashes


def score_fix(job: dict, repo: Path, source: Path, timeout: float = SCORE_TIMEOUT) -> tuple[bool, str]:
    """(passed, note): the judging files unchanged, all their tests passing, and still unchanged afterwards."""
    expected = seeded_hashes(job, source)
    changed = _changed(repo, expected)
    if changed:
        return False, f"test files changed: {', '.join(changed)}"
    files = list(expected)
    run = run_pytest(repo, files, timeout=timeout, readonly=files)  # read-only mounts when the sandbox is on
    changed = _changed(repo, expected)
    if changed:
        return False, f"test files changed while they ran: {', '.join(changed)}"
    return run.green, f"{', '.join(files)}: {run.summary()}"


def _changed(repo: Path, expected: dict[str, str]) -> list[str]:
    return [rel for rel, sha in expected.items() if _digest(repo / rel) != sha]


def _digest(path: Path) -> str:
    """sha256 of a file's bytes; '' when it is not there (a deleted judge counts as changed)."""
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else ""
