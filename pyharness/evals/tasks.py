"""Eval tasks as data: stdout tasks (a prompt, a visible example, hidden cases, a reference) and job tasks (a
seeded repo with its check), read from task files and checked case by case; and the first message of a stdout run."""

import fnmatch
import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.errors import UserError
from pyharness.workspace.procs import clean_env, run_once

JOB_MODES = ("ask", "fix", "add", "run")


class TaskError(ValueError):
    """A task file that cannot be used; the message says which field is wrong."""


def evals_dir() -> Path:
    """The eval data folder: evals/ in the source checkout, else ./evals."""
    beside = Path(__file__).resolve().parents[2] / "evals"
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


def example_text(task: StdoutTask) -> str:
    """A program task's prompt followed by its example input and output, each in a fence."""
    return (f"{task.prompt.strip()}\n\nExample input:\n```\n{task.example.stdin}```\n"
            f"Example output:\n```\n{task.example.stdout}```\n\n")


def task_message(task: StdoutTask) -> str:
    """The first message of a stdout run: the prompt, the example, and where the program goes."""
    if task.entry_point:
        return (f"Write this Python function in main.py, complete, with the imports it needs:\n\n```python\n"
                f"{task.prompt.strip()}\n```\n\nmain.py must only define it: do not read input and do not print. "
                f"When it is tested, lines that call it are appended to main.py; for example\n"
                f"{task.example.driver.strip().splitlines()[-1]}\nmust print exactly:\n{task.example.stdout}\n"
                "The run_tests action then checks it on the example.")
    return (example_text(task) + "Write the whole program to main.py: it reads standard input and prints only the "
            "output asked for (no test code, no extra lines). The run_tests action then runs main.py on the example.")
