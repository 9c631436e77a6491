"""Eval suites and their tasks: stdout task files, HumanEval as exact-stdout tasks, seeded-bug job repos."""

import fnmatch
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.errors import UserError
from pyharness.procs import clean_env, run_once

JOB_MODES = ("ask", "fix", "add", "run")


class TaskError(ValueError):
    """A task file that cannot be used; the message says which field is wrong."""


def evals_dir() -> Path:
    """The eval data folder: evals/ in the source checkout, else ./evals."""
    beside = Path(__file__).resolve().parents[1] / "evals"
    return beside if beside.is_dir() else Path.cwd() / "evals"


@dataclass
class Case:
    """One input and the exact output expected; `driver` is code appended to main.py before it runs."""

    stdin: str
    stdout: str
    driver: str = ""


@dataclass
class StdoutTask:
    """A program task: main.py must print exactly each case's stdout (a function task appends a driver)."""

    id: str
    prompt: str
    example: Case
    hidden: list[Case]
    reference: str | None = None
    time_limit: float = 5.0
    tags: list[str] = field(default_factory=list)
    entry_point: str = ""
    """Set for function tasks (humaneval): main.py defines this function and each case's driver calls it."""
    path: str = ""


@dataclass
class JobTask:
    """A job (ask/fix/add/run) on a seeded copy of a repo, judged by demo.check."""

    id: str
    job: dict
    root: Path
    source: Path | None = None
    path: str = ""


Task = StdoutTask | JobTask


@dataclass
class Suite:
    """The tasks of a suite plus the files that were skipped, each as 'PATH: reason'."""

    name: str
    tasks: list[Task]
    problems: list[str] = field(default_factory=list)


def load_suite(spec: str) -> Suite:
    """A named suite (stdout, humaneval, jobs, mutants = its test split, mutants:dev, mutants:all) or a directory of
    task files in the stdout format."""
    if spec == "stdout":
        return load_task_dir(evals_dir() / "stdout" / "tasks", "stdout")
    if spec == "humaneval":
        from pyharness.humaneval import humaneval_suite

        return humaneval_suite()
    if spec == "jobs":
        return job_suite()
    if spec == "mutants" or spec.startswith("mutants:"):
        from pyharness.mutants import load_jobs

        split = spec.partition(":")[2] or "test"
        return Suite("mutants" if split == "test" else f"mutants-{split}", load_jobs(split))
    folder = Path(spec).expanduser()
    if folder.is_dir():
        return load_task_dir(folder / "tasks" if (folder / "tasks").is_dir() else folder, folder.resolve().name)
    raise UserError(f"unknown suite {spec!r}: use stdout, humaneval, jobs, mutants[:dev|:all] or a directory of task "
                    "files")


def load_task_dir(folder: Path, name: str) -> Suite:
    """Every *.json task file of a folder; a malformed file is listed in problems, never counted."""
    suite = Suite(name, [])
    for path in sorted(folder.glob("*.json")):
        try:
            task = parse_task(json.loads(path.read_text(encoding="utf-8")), path)
        except (OSError, ValueError) as err:
            suite.problems.append(f"{path}: {err}")
            continue
        if any(t.id == task.id for t in suite.tasks):
            suite.problems.append(f"{path}: duplicate task id {task.id!r}")
            continue
        suite.tasks.append(task)
    return suite


def parse_task(data: object, path: Path) -> StdoutTask:
    """A StdoutTask from a task file's JSON, or TaskError saying which field is wrong."""
    if not isinstance(data, dict):
        raise TaskError("a task file must hold one JSON object")
    if not isinstance(data.get("prompt"), str) or not data["prompt"].strip():
        raise TaskError("'prompt' must be a non-empty string")
    hidden = data.get("hidden")
    if not isinstance(hidden, list) or not hidden:
        raise TaskError("'hidden' must be a non-empty list of {stdin, stdout} cases")
    reference = data.get("reference")
    if reference is not None and not isinstance(reference, str):
        raise TaskError("'reference' must be a string (a whole program)")
    limit = data.get("time_limit", 5)
    if isinstance(limit, bool) or not isinstance(limit, int | float) or limit <= 0:
        raise TaskError("'time_limit' must be a positive number of seconds")
    if not isinstance(data.get("tags", []), list):
        raise TaskError("'tags' must be a list of strings")
    return StdoutTask(id=str(data.get("id") or path.stem), prompt=data["prompt"],
                      example=_case(data.get("example"), "example"),
                      hidden=[_case(c, f"hidden[{n}]") for n, c in enumerate(hidden)], reference=reference,
                      time_limit=float(limit), tags=list(data.get("tags", [])), path=str(path))


def _case(value: object, where: str) -> Case:
    if not isinstance(value, dict) or not all(isinstance(value.get(k), str) for k in ("stdin", "stdout")):
        raise TaskError(f"'{where}' must be an object with string 'stdin' and 'stdout'")
    return Case(value["stdin"], value["stdout"], str(value.get("driver", "")))


def select(tasks: list[Task], pattern: str | None) -> list[Task]:
    """Tasks whose id matches a glob (commas separate several), or the ids listed in @FILE."""
    if not pattern:
        return tasks
    if pattern.startswith("@"):
        listed = Path(pattern[1:]).expanduser()
        try:
            lines = listed.read_text(encoding="utf-8").splitlines()
        except OSError as err:
            raise UserError(f"cannot read the task list {listed}: {err.strerror}") from None
        ids = [line.split("#")[0].strip() for line in lines if line.split("#")[0].strip()]
        by_id = {t.id: t for t in tasks}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            raise UserError(f"{listed} names tasks the suite does not have: {', '.join(unknown)}")
        return [by_id[i] for i in dict.fromkeys(ids)]
    globs = [g.strip() for g in pattern.split(",") if g.strip()]
    chosen = [t for t in tasks if any(fnmatch.fnmatchcase(t.id, g) for g in globs)]
    if not chosen:
        raise UserError(f"no task id matches {pattern!r}")
    return chosen


def job_suite() -> Suite:
    """The four demo jobs plus every evals/jobs/*/job.json."""
    from pyharness.demo import demo_root, load_jobs

    root = demo_root()
    suite = Suite("jobs", [JobTask(f"demo_{j['name']}", j, root, None, str(root / "jobs.json")) for j in load_jobs()])
    for path in sorted((evals_dir() / "jobs").glob("*/job.json")):
        try:
            job = json.loads(path.read_text(encoding="utf-8"))
            _validate_job(job, path.parent)
        except (OSError, ValueError) as err:
            suite.problems.append(f"{path}: {err}")
            continue
        suite.tasks.append(JobTask(path.parent.name, job, path.parent, path.parent / "repo", str(path)))
    return suite


def _validate_job(job: object, folder: Path) -> None:
    if not isinstance(job, dict) or job.get("mode") not in JOB_MODES or not isinstance(job.get("task"), str):
        raise TaskError(f"a job needs 'mode' (one of {', '.join(JOB_MODES)}) and a 'task' string")
    if not (folder / "repo").is_dir():
        raise TaskError("the job folder has no repo/")
    if job["mode"] == "fix" and not isinstance((job.get("check") or {}).get("tests_pass"), list):
        raise TaskError("a fix job needs check.tests_pass (a list of test node ids)")
    if job["mode"] == "ask" and not isinstance(job.get("check"), dict):
        raise TaskError("an ask job needs 'check' (answer_contains_all / answer_contains_any)")
    if job["mode"] in ("add", "run") and not (folder / str(job.get("hidden_test", ""))).is_file():
        raise TaskError(f"hidden_test {job.get('hidden_test')!r} is not a file of the job folder")


@dataclass
class CaseRun:
    """What a program printed for one case, and what went wrong ('' when it exited cleanly)."""

    stdout: str
    error: str = ""


def run_case(source: str, case: Case, time_limit: float, cwd: Path | None = None) -> CaseRun:
    """Run a program (plus the case's driver) with the case's stdin, in a subprocess with a time limit."""
    with tempfile.TemporaryDirectory(prefix="ph-case-") as tmp:
        program = Path(tmp) / "main.py"
        program.write_text(source + case.driver, encoding="utf-8")
        workdir = cwd or Path(tmp)
        env = clean_env({"PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONPATH": str(workdir)})
        try:
            proc = run_once([sys.executable, str(program)], cwd=workdir, env=env, stdin=case.stdin.encode("utf-8"),
                            timeout=time_limit, read=[Path(tmp)])
        except subprocess.TimeoutExpired as e:
            return CaseRun((e.stdout or b"").decode("utf-8", errors="replace"), f"timed out after {time_limit:g} s")
        out, err = proc.stdout, proc.stderr
    text = out.decode("utf-8", errors="replace")
    if proc.returncode != 0:
        last = err.decode("utf-8", errors="replace").strip().splitlines()[-1:] or [""]
        return CaseRun(text, f"exit {proc.returncode}: {last[0][:200]}")
    return CaseRun(text)


def lenient(text: str) -> str:
    """Output with trailing whitespace stripped from each line and trailing blank lines dropped."""
    return "\n".join(line.rstrip() for line in text.splitlines()).rstrip("\n")


@dataclass
class Score:
    """How a program did on a task's example and hidden cases."""

    strict: bool
    lenient: bool
    cases: int
    strict_passed: int
    note: str = ""


def score_source(task: StdoutTask, source: str, cwd: Path | None = None) -> Score:
    """Strict (byte-exact) and lenient scores over the example and every hidden case."""
    cases = [task.example, *task.hidden]
    strict_passed, lenient_passed, note = 0, 0, ""
    for n, case in enumerate(cases):
        run = run_case(source, case, task.time_limit, cwd)
        exact = not run.error and run.stdout == case.stdout
        strict_passed += exact
        lenient_passed += not run.error and lenient(run.stdout) == lenient(case.stdout)
        if not exact and not note:
            where = "example" if n == 0 else f"hidden case {n}"
            note = f"{where}: {run.error}" if run.error else \
                f"{where}: expected {case.stdout[:60]!r}, got {run.stdout[:60]!r}"
    return Score(strict_passed == len(cases), lenient_passed == len(cases), len(cases), strict_passed, note)


@dataclass
class TaskCheck:
    """A task's sanity check: its reference passes and an empty solution fails."""

    task: str
    ok: bool
    note: str


def check_task(task: Task) -> TaskCheck:
    """Run the task's reference (must pass) and an empty solution (must fail)."""
    if isinstance(task, JobTask):
        return _check_job(task)
    if not isinstance(task, StdoutTask):  # a mutant job
        from pyharness.mutants import check

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
    from pyharness.agent import RunResult
    from pyharness.demo import check, make_repo

    job = task.job
    with tempfile.TemporaryDirectory(prefix="ph-check-") as tmp:
        if job["mode"] == "ask":
            spec = job.get("check", {})
            answer = " ".join(spec.get("answer_contains_all", []) + spec.get("answer_contains_any", [])[:1])
            good = check(job, Path(tmp), RunResult("done", "reference", answer=answer), root=task.root)
            bad = check(job, Path(tmp), RunResult("done", "empty", answer="I do not know."), root=task.root)
        else:
            if job["mode"] != "fix" and not job.get("reference"):
                return TaskCheck(task.id, False, "no reference patches to check")
            solved = {**job, "seed": job.get("seed", []) + job.get("reference", [])} if job.get("reference") \
                else {**job, "seed": []}
            done = RunResult("done", "reference")
            good = check(job, make_repo(Path(tmp) / "ref", solved, root=task.root, source=task.source), done,
                         root=task.root)
            bad = check(job, make_repo(Path(tmp) / "empty", job, root=task.root, source=task.source), done,
                        root=task.root)
    if not good[0]:
        return TaskCheck(task.id, False, f"reference fails: {good[1]}")
    if bad[0]:
        return TaskCheck(task.id, False, f"the unsolved job already passes its check: {bad[1]}")
    return TaskCheck(task.id, True, f"reference passes ({good[1]}); unsolved fails")
