"""Eval suites by name: stdout task files, HumanEval as exact-stdout tasks, seeded-bug job repos, mutants of real
projects, real bugs from their histories (each suite's own module is imported only when it is asked for); and the
sanity check of a task."""

import json
import tempfile
from pathlib import Path

from pyharness.errors import UserError
from pyharness.evals.tasks import (
    JOB_MODES,
    JobTask,
    StdoutTask,
    Suite,
    Task,
    TaskCheck,
    TaskError,
    evals_dir,
    load_task_dir,
    score_source,
)


def load_suite(spec: str) -> Suite:
    """A named suite (stdout, humaneval, jobs, mutants = its test split, mutants:dev, mutants:all, bugs, bugs:dev,
    bugs:all) or a folder of your own: stdout task files and/or job folders (`folder_suite`)."""
    if spec == "stdout":
        return load_task_dir(evals_dir() / "stdout" / "tasks", "stdout")
    if spec == "humaneval":
        from pyharness.evals.humaneval import humaneval_suite

        return humaneval_suite()
    if spec == "jobs":
        return job_suite()
    if spec == "mutants" or spec.startswith("mutants:"):
        from pyharness.evals.mutants import load_jobs

        split = spec.partition(":")[2] or "test"
        return Suite("mutants" if split == "test" else f"mutants-{split}", load_jobs(split))
    if spec == "bugs" or spec.startswith("bugs:"):
        from pyharness.evals.bugs import load_jobs as load_bugs

        split = spec.partition(":")[2] or "test"
        return Suite("bugs" if split == "test" else f"bugs-{split}", load_bugs(split))
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return folder_suite(folder)
    raise UserError(f"unknown suite {spec!r}: use stdout, humaneval, jobs, mutants[:dev|:all], bugs[:dev|:all] or a "
                    "folder of task files or job folders")


def folder_suite(folder: Path) -> Suite:
    """Your own suite: the stdout task files of a folder (or of its tasks/) and its job folders (each `job.json` +
    `repo/`, the format of evals/jobs/), named after the folder."""
    tasks = folder / "tasks" if (folder / "tasks").is_dir() else folder
    suite = load_task_dir(tasks, folder.resolve().name)
    jobs = sorted(folder.glob("*/job.json"))
    if not suite.tasks and not suite.problems and not jobs:
        raise UserError(f"{folder} holds no task files (*.json) and no job folders (*/job.json with a repo/)")
    add_job_folders(suite, jobs)
    return suite


def job_suite() -> Suite:
    """The four demo jobs plus every evals/jobs/*/job.json."""
    from pyharness.evals.demo import demo_root, load_jobs

    root = demo_root()
    suite = Suite("jobs", [JobTask(f"demo_{j['name']}", j, root, None, str(root / "jobs.json")) for j in load_jobs()])
    add_job_folders(suite, sorted((evals_dir() / "jobs").glob("*/job.json")))
    return suite


def add_job_folders(suite: Suite, paths: list[Path]) -> None:
    """A job task per job.json (its id: the folder's name); a malformed or duplicate one goes to the problems."""
    for path in paths:
        try:
            job = json.loads(path.read_text(encoding="utf-8"))
            _validate_job(job, path.parent)
        except (OSError, ValueError) as err:
            suite.problems.append(f"{path}: {err}")
            continue
        if any(t.id == path.parent.name for t in suite.tasks):
            suite.problems.append(f"{path}: duplicate task id {path.parent.name!r}")
            continue
        suite.tasks.append(JobTask(path.parent.name, job, path.parent, path.parent / "repo", str(path)))


def _validate_job(job: object, folder: Path) -> None:
    """A job folder is untrusted input: its fields are checked as data before anything is copied or run."""
    from pyharness.evals.demo import job_file, job_path

    if not isinstance(job, dict) or job.get("mode") not in JOB_MODES or not isinstance(job.get("task"), str):
        raise TaskError(f"a job needs 'mode' (one of {', '.join(JOB_MODES)}) and a 'task' string")
    if (folder / "repo").is_symlink():
        raise TaskError("the job folder's repo/ is a symlink; a job's repo is a folder of its own")
    if not (folder / "repo").is_dir():
        raise TaskError("the job folder has no repo/")
    for key in ("seed", "reference"):
        patches = job.get(key, [])
        if not isinstance(patches, list) or not all(isinstance(p, dict) and all(
                isinstance(p.get(k), str) for k in ("path", "find", "replace")) for p in patches):
            raise TaskError(f"'{key}' must be a list of {{path, find, replace}} text patches")
        for patch in patches:
            job_path(patch["path"], "seed path")
    if job["mode"] == "fix":
        nodes = (job.get("check") or {}).get("tests_pass")
        if not isinstance(nodes, list) or not all(isinstance(n, str) for n in nodes):
            raise TaskError("a fix job needs check.tests_pass (a list of test node ids)")
        for node in nodes:
            job_path(node.split("::")[0], "test id")
    if job["mode"] == "ask" and not isinstance(job.get("check"), dict):
        raise TaskError("an ask job needs 'check' (answer_contains_all / answer_contains_any)")
    if job["mode"] in ("add", "run"):
        job_file(folder, job.get("hidden_test"), "hidden_test")


def check_task(task: Task) -> TaskCheck:
    """Run the task's reference (must pass) and an empty solution (must fail)."""
    if isinstance(task, JobTask):
        return _check_job(task)
    from pyharness.evals.bugs import BugJob
    from pyharness.evals.bugs import check as check_bug

    if isinstance(task, BugJob):
        return TaskCheck(task.id, *check_bug(task))
    if not isinstance(task, StdoutTask):  # a mutant job
        from pyharness.evals.mutants import check

        return TaskCheck(task.id, *check(task))
    if task.reference is None:
        return TaskCheck(task.id, False, "no reference solution to check")
    ref = score_source(task, task.reference)
    if not ref.strict:
        return TaskCheck(task.id, False, f"reference fails: {ref.note}")
    if score_source(task, "").lenient:
        return TaskCheck(task.id, False, "an empty main.py passes: the cases test nothing")
    return TaskCheck(task.id, True, f"reference passes {ref.cases} cases; empty solution fails")


def _check_job(task: JobTask) -> TaskCheck:
    from pyharness.evals.demo import check, make_repo
    from pyharness.runstate import Outcome, RunResult

    job = task.job
    with tempfile.TemporaryDirectory(prefix="ph-check-") as tmp:
        if job["mode"] == "ask":
            spec = job.get("check", {})
            answer = " ".join(spec.get("answer_contains_all", []) + spec.get("answer_contains_any", [])[:1])
            good = check(job, Path(tmp), RunResult(Outcome.DONE, "reference", answer=answer), root=task.root)
            bad = check(job, Path(tmp), RunResult(Outcome.DONE, "empty", answer="I do not know."), root=task.root)
        else:
            if job["mode"] != "fix" and not job.get("reference"):
                return TaskCheck(task.id, False, "no reference patches to check")
            solved = {**job, "seed": job.get("seed", []) + job.get("reference", [])} if job.get("reference") \
                else {**job, "seed": []}
            done = RunResult(Outcome.DONE, "reference")
            good = check(job, make_repo(Path(tmp) / "ref", solved, root=task.root, source=task.source), done,
                         root=task.root, source=task.source)
            bad = check(job, make_repo(Path(tmp) / "empty", job, root=task.root, source=task.source), done,
                        root=task.root, source=task.source)
    if not good[0]:
        return TaskCheck(task.id, False, f"reference fails: {good[1]}")
    if bad[0]:
        return TaskCheck(task.id, False, f"the unsolved job already passes its check: {bad[1]}")
    return TaskCheck(task.id, True, f"reference passes ({good[1]}); unsolved fails")
