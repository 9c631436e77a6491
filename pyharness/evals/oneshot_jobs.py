"""protocol=oneshot for job tasks: the model alone, used as a person uses a chat model.

One message holds the task and what that person would paste: for a fix, the failing pytest output and the source
files it points at (else the modules the failing tests import); for add/run/ask, the repo's source files. One reply,
greedy, applied as it is: no loop, no repair. Fix replies name functions (merged by name, methods included, so a
3,000-line file needs no whole-file reply); add/run replies give whole files.

A fix reply that leaves the tests failing more than before goes back, as at the end of every ph run
(`pyharness.workspace.keepbest`): ph never hands back a tree worse than it found it, and the score cannot change by
it (a tree that fails more tests than the seed is not a pass). The run's reason says so.
"""

import ast
import re
import time
from pathlib import Path

from pyharness.errors import ActionError
from pyharness.evals.oneshot import FENCE, ask_once, finish_once
from pyharness.harness.codemerge import merge_functions
from pyharness.loop.transcript import Transcript
from pyharness.models.base import END_OF_TURN, ChatOptions, Model
from pyharness.runstate import RunResult
from pyharness.workspace.keepbest import BestTree, failing_of
from pyharness.workspace.testrun import TestRun, run_pytest
from pyharness.workspace.tree import Workspace

MAX_FILE_LINES, MAX_CONTEXT_CHARS, OUTPUT_LINES = 400, 24_000, 60
TEST_TIMEOUT = 300
PATH_COMMENT = re.compile(r"^\s*#\s*(?:file:?\s*)?`?([\w./-]+\.py)`?\s*$", re.MULTILINE)
NAMED = re.compile(r"([\w./-]+\.py):\d+")
FIX_REQUEST = ("Reply with the corrected function(s), each whole, in one ```python block, with a comment line "
               "`# path/to/file.py` before the functions of each file. Do not change the tests.")
FILES_REQUEST = ("Reply with each file you create or change, whole, in its own ```python block whose first line is a "
                 "comment with its path, e.g. `# pkg/module.py`.")
ASK_REQUEST = "Answer the question; name the file and line the answer comes from."


def job_message(ws: Workspace, mode: str, task: str, tests: list[str] | None,
                python: str | None = None, run: TestRun | None = None) -> tuple[str, list[str]]:
    """The one user message of a oneshot job run and the source files it shows (fix: `run` is the tests' run before
    the reply, else they are run here by `python`)."""
    if mode == "fix":
        run = run or run_pytest(ws.root, tests, timeout=TEST_TIMEOUT, python=python)
        lines = run.output.strip().splitlines()
        output = "\n".join(lines[-OUTPUT_LINES:])
        files = _named_sources(ws, output) or _imported_sources(ws, run.failing)
        head = (task.strip() or "Make the failing tests pass: fix the bug in the code, not the tests.")
        return (f"{head}\n\nThe tests fail like this:\n```\n{output}\n```\n\n{_show(ws, files)}{FIX_REQUEST}",
                files)
    files = [f for f in ws.files() if f.endswith(".py") and not ws.is_test_path(f)]
    request = ASK_REQUEST if mode == "ask" else FILES_REQUEST
    return f"{task.strip()}\n\n{_show(ws, files)}{request}", files


def apply_reply(ws: Workspace, mode: str, reply: str, shown: list[str]) -> list[str]:
    """Write what the reply says into the workspace; the files changed. Fix: functions merged by name into the file
    named before them (else into the shown file that has them all); add/run: whole files by their path comment."""
    changed = []
    for path, code in _segments(reply):
        if mode == "fix":
            targets = [path] if path in shown or (path and _exists(ws, path)) else shown
            for target in targets:
                merged = merge_functions(ws.read_text(target), code) if _exists(ws, target) else None
                if merged is not None:
                    _write(ws, target, merged, changed)
                    break
        elif path:
            _write(ws, path, code if code.endswith("\n") else code + "\n", changed)
    return changed


def run_oneshot_job(repo: Path, mode: str, task: str, model: Model, tests: list[str] | None = None,
                    python: str | None = None) -> RunResult:
    """Ask once, apply the reply, and log prompt and reply to a transcript in the repo (`python` runs the tests)."""
    ws = Workspace(repo, protect_tests=mode == "fix")
    transcript = Transcript(repo, "oneshot")
    started = time.monotonic()
    before = run_pytest(ws.root, tests, timeout=TEST_TIMEOUT, python=python) if mode == "fix" else None
    message, shown = job_message(ws, mode, task, tests, python, before)
    options = ChatOptions(max_tokens=1024, temperature=0.0, seed=0, stop=list(END_OF_TURN))
    reply = ask_once(model, transcript, message, options, started, mode=f"oneshot-{mode}", task=task, shown=shown)
    changed = [] if mode == "ask" else apply_reply(ws, mode, reply.text, shown)
    applied = mode == "ask" or bool(changed)
    reason = "one reply (oneshot)" if applied else "one reply (oneshot), nothing applied"
    put_back = ""
    if before is not None and changed:
        judge = sorted({t.split("::")[0] for t in tests}) if tests else None  # read-only in the sandbox
        measure = lambda: failing_of(run_pytest(ws.root, tests, timeout=TEST_TIMEOUT, python=python,  # noqa: E731
                                                readonly=judge))
        put_back = BestTree(failing_of(before)).settle(ws, measure)
    if put_back:
        reason += f"; {put_back}"
    return finish_once(transcript, reply, started, applied, changed, reason,
                       answer=reply.text if mode == "ask" else "", changed=changed, put_back=put_back)


def _segments(reply: str) -> list[tuple[str, str]]:
    """(path or '', code) for each python fence, split further at `# path.py` comment lines."""
    out = []
    for match in FENCE.finditer(reply):
        if match.group(1).lower() not in ("", "python", "py", "python3"):
            continue
        body = match.group(2)
        cuts = list(PATH_COMMENT.finditer(body))
        if not cuts:
            out.append(("", body))
        elif body[:cuts[0].start()].strip():
            out.append(("", body[:cuts[0].start()]))
        for i, cut in enumerate(cuts):
            end = cuts[i + 1].start() if i + 1 < len(cuts) else len(body)
            out.append((cut.group(1).lstrip("./"), body[cut.end():end].lstrip("\n")))
    return out


def _write(ws: Workspace, path: str, text: str, changed: list[str]) -> None:
    try:
        rel, _ = ws.write_text(path, text)
    except ActionError:  # a test file in fix mode, a path outside the repo: the reply is not applied there
        return
    if rel not in changed:
        changed.append(rel)


def _exists(ws: Workspace, path: str) -> bool:
    try:
        return ws.resolve(path).is_file()
    except ActionError:
        return False


def _show(ws: Workspace, files: list[str]) -> str:
    """The files as fenced blocks with their paths, each cut at MAX_FILE_LINES, all within MAX_CONTEXT_CHARS."""
    parts, size = [], 0
    for path in files:
        lines = ws.read_text(path).splitlines()
        more = f"\n# ... ({len(lines) - MAX_FILE_LINES} more lines)" if len(lines) > MAX_FILE_LINES else ""
        block = f"{path}:\n```python\n" + "\n".join(lines[:MAX_FILE_LINES]) + f"{more}\n```\n\n"
        if parts and size + len(block) > MAX_CONTEXT_CHARS:
            break
        parts.append(block)
        size += len(block)
    return "".join(parts)


def _named_sources(ws: Workspace, output: str) -> list[str]:
    """Repo source files (not tests) that the pytest output names, in order of first mention."""
    found = []
    for name in NAMED.findall(output):
        name = name.lstrip("./")
        if name not in found and not ws.is_test_path(name) and _exists(ws, name):
            found.append(name)
    return found[:3]


def _imported_sources(ws: Workspace, failing: list[str]) -> list[str]:
    """Repo source files (no package __init__) that the failing tests' files import."""
    found = []
    for test_file in dict.fromkeys(node.split("::")[0] for node in failing):
        try:
            tree = ast.parse(ws.read_text(test_file))
        except (ActionError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            for name in names:
                path = name.replace(".", "/") + ".py"
                if path not in found and not ws.is_test_path(path) and _exists(ws, path):
                    found.append(path)
    return found[:3]
