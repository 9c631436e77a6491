"""Run pytest in the sandbox on a scrubbed environment and reduce its result to counts plus one traceback.

Running the tests runs the repository's code: `ph` only does it in the repo it was pointed at, confined by the
sandbox (`pyharness.workspace.sandbox`), with credential-like environment variables removed (`procs.clean_env`), under a
time limit, and it ends the whole process tree afterwards. The counts and failing tests come from ph's own pytest
plugin through a file descriptor the tests cannot open by path (`ph_pytest_report`); the output goes to a capped
log file on disk, and the model sees a short part of it (the first traceback).
"""

import json
import os
import re
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.errors import Invalid
from pyharness.workspace import sandbox
from pyharness.workspace.noise import PYTEST_QUIET_ARGS, QUIET_ENV, normalise, truncate
from pyharness.workspace.procs import CappedLog, clean_env, run_tree
from pyharness.workspace.pytestconfig import pinned_args, unsafe_target

# (?<!\d): a count starts where its digits start, so a long run of digits is not tried from each of them.
COUNT = re.compile(r"(?<!\d)(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
# pytest's last summary line, after normalise: '1 failed, 2 passed in <T>s', '=== no tests ran in <T>s ==='.
# The rest of the line is one greedy '.*': a lazy '.*?' before '[ =]*$' tried every split of a long tail of spaces
# or '=' that does not end the line (quadratic: 50 KB of them took 8 s).
SUMMARY = re.compile(r"^=*[ ]?((?:\d+ [a-z]+(?:, )?)+|no tests ran) in <T>s.*$", re.MULTILINE)
NODE_LINE = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - .*)?$", re.MULTILINE)
SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.MULTILINE)
KEPT_LOGS = 20
"""How many test logs stay on disk (the newest)."""

OUTCOMES = {0: "passed", 1: "failed", 2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests",
            6: "too many warnings"}
"""pytest's exit codes (pytest.ExitCode) as outcomes; a timeout or a signal is an outcome of its own."""


EXCEPTION_LINE = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Exit|Interrupt|Warning)\b")


@dataclass
class TestRun:
    """What one pytest run showed."""

    exit_code: int
    counts: dict[str, int] = field(default_factory=dict)
    failing: list[str] = field(default_factory=list)
    """Node ids that failed or errored, in report order."""
    first_traceback: str = ""
    output: str = ""
    timed_out: bool = False
    timeout: float = 0.0
    """The time limit the run had (seconds)."""
    summary_line: str = ""
    """pytest's final summary line ('1 failed, 2 passed in <T>s'), '' if it printed none."""
    log_path: Path | None = None
    """The capped log of the whole output on disk."""
    omitted_lines: int = 0
    """Lines of output left out of the log (and of `output`) by the cap."""
    reported: bool = True
    """pytest's end reached ph through its verdict channel (`ph_pytest_report`); False when the process ended
    without it (a test called `os._exit`, or killed pytest): such a run is never green, whatever it printed."""

    @property
    def green(self) -> bool:
        """True when tests ran and none failed (pytest exit 5, no tests, is not green)."""
        return self.exit_code == 0 and not self.timed_out and self.reported

    @property
    def outcome(self) -> str:
        """passed, failed, interrupted, internal error, usage error, no tests, too many warnings, timed out, killed."""
        if self.timed_out:
            return "timed out"
        if self.exit_code < 0:
            return "killed"
        if not self.reported:
            return "unreported"
        return OUTCOMES.get(self.exit_code, "error")

    def summary(self) -> str:
        """One line: counts or what went wrong."""
        counts = ", ".join(f"{n} {k}" for k, n in self.counts.items() if n)
        more = f" ({counts})" if counts else ""
        match self.outcome:
            case "timed out":
                return f"tests timed out after {self.timeout:g} s (is there an endless loop?)"
            case "no tests":
                return "no tests ran (pytest collected no tests)"
            case "passed" | "failed":
                return counts or f"pytest exited with code {self.exit_code}"
            case "interrupted":
                return f"pytest was interrupted (exit 2: a collection error or a KeyboardInterrupt){more}"
            case "internal error":
                return f"pytest hit an internal error (exit 3, often a broken plugin or conftest hook){more}"
            case "usage error":
                return "pytest could not start (exit 4: a usage error or a conftest.py that fails to import)"
            case "too many warnings":
                return f"the tests pass but pytest's maximum number of warnings was exceeded (exit 6){more}"
            case "killed":
                return f"pytest was killed by signal {-self.exit_code}{more}"
            case "unreported":
                return (f"pytest ended (exit {self.exit_code}) without reporting its result to ph: something the "
                        f"tests ran ended the process early (os._exit?){more}")
        return f"pytest exited with code {self.exit_code}{more}"

    def error_line(self) -> str:
        """The failure's last `E` line (the exception or the assertion), or '' for a green run."""
        lines = [ln.strip()[1:].strip() for ln in self.first_traceback.splitlines() if ln.strip().startswith("E ")]
        raised = [ln for ln in lines if EXCEPTION_LINE.match(ln) and not ln.startswith("AssertionError")]
        return (raised or [ln for ln in lines if ln] or [""])[-1 if raised else 0]

    def observation(self, max_chars: int = 2500, max_lines: int = 256) -> str:
        """Counts plus the first failing test's traceback (or the output's head and tail): what the model sees."""
        if self.green:
            return f"All tests passed: {self.summary()}."
        header = {"failed": "Tests failed", "timed out": "Tests stopped", "no tests": "Tests not run"}
        lines = [f"{header.get(self.outcome, 'The tests could not run')}: {self.summary()}."]
        if self.failing:
            more = f" (and {len(self.failing) - 1} more)" if len(self.failing) > 1 else ""
            lines.append(f"First failing test: {self.failing[0]}{more}")
        body = self.first_traceback or self.output
        if body:
            lines.append(head_tail(body, max_chars, max_lines))
        if self.summary_line and self.summary_line not in lines[-1]:
            lines.append(self.summary_line)
        if self.omitted_lines and self.log_path:
            lines.append(f"(the output was long: {self.omitted_lines} lines left out; full log: {self.log_path})")
        return "\n".join(lines)


def run_pytest(root: Path, targets: list[str] | None = None, *, timeout: float = 60.0,
               python: str | None = None, readonly: list[str] | None = None) -> TestRun:
    """Run pytest on `targets` (default: the whole suite) inside `root` in the sandbox, its configuration pinned
    to the repo (`pytestconfig.pinned_args`), the repo-relative files `readonly` mounted read-only; the process
    tree is ended afterwards. Counts and failing tests come from ph's verdict channel (`ph_pytest_report`), not
    from what the process printed. A target that is a pytest option is a ValueError: targets are data."""
    targets = list(targets or [])
    why = next((unsafe_target(t) for t in targets if unsafe_target(t)), "")
    if why:
        raise ValueError(why)
    cmd = [python or sys.executable, "-c", BOOT, str(PLUGIN), *PYTEST_QUIET_ARGS, "--tb=short", "-rfE",
           *pinned_args(root, targets), *targets]
    paths = [*import_roots(root), *filter(None, [os.environ.get("PYTHONPATH")])]
    clear_bytecode(root, readonly or [])
    log = CappedLog(_log_path())
    report = log.path.with_suffix(".report")
    fd = os.open(report, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    env = clean_env({**QUIET_ENV, "PYTHONPATH": os.pathsep.join(paths), "PH_REPORT_FD": str(fd)})
    try:
        try:
            done = run_tree(cmd, cwd=root, env=env, timeout=timeout, sink=log.write, pass_fds=(fd,),
                            readonly=[root / rel for rel in readonly or []])
        finally:
            os.close(fd)
            raw = log.close()
    except BaseException:  # a full disk, Ctrl-C: no report and no cut-off log are left behind
        report.unlink(missing_ok=True)
        log.path.unlink(missing_ok=True)
        raise
    text = normalise(raw.decode("utf-8", errors="replace"), root=str(root) + "/")
    run = parse_pytest_output(text, done.returncode, done.timed_out)
    run.timeout, run.log_path, run.omitted_lines = timeout, log.path, log.omitted_lines
    _apply_report(run, report)
    return run


def import_roots(root: Path) -> list[str]:
    """Where the repo's own code is imported from, ahead of anything installed: the tree itself, and its `src/` in a
    src layout. An editable install in the project's venv points at the user's tree; a scratch copy's code must win
    over it, or a candidate would be tested against the original."""
    return [str(root), *([str(root / "src")] if (root / "src").is_dir() else [])]


def _apply_report(run: TestRun, report: Path) -> None:
    """Overwrite the counts, failing tests and exit code with what ph's plugin reported (see TestRun.reported). The
    first `end` record closes the report: whatever follows it (code that kept a copy of the descriptor and wrote a
    second, forged end at exit) is not read."""
    counts: dict[str, int] = {}
    failing: list[str] = []
    end = None
    try:
        lines = report.read_text(encoding="utf-8", errors="replace").splitlines()
    finally:
        report.unlink(missing_ok=True)
    for line in lines:
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if not isinstance(rec, dict):
            continue
        if "end" in rec:
            end = rec["end"]
            break
        kind = _KIND.get((rec.get("when"), rec.get("outcome")))
        if kind:
            counts[kind] = counts.get(kind, 0) + 1
            if kind in ("failed", "errors") and str(rec.get("nodeid")) not in failing:
                failing.append(str(rec.get("nodeid")))
    counts["deselected"] = run.counts.get("deselected", 0)  # -k/-m choices: pytest reports no test for them
    run.counts = {k: counts[k] for k in _ORDER if counts.get(k)}
    run.failing = failing
    if not isinstance(end, int) or isinstance(end, bool):  # what was reported before the process ended stands
        run.reported = run.exit_code != 0  # a failed start (a conftest that fails to import) reports nothing
    elif run.exit_code == 0:  # green needs both: a clean exit and the plugin's end (a non-zero exit stands: 6)
        run.exit_code = end


_KIND = {("call", "passed"): "passed", ("call", "failed"): "failed", ("call", "skipped"): "skipped",
         ("setup", "skipped"): "skipped", ("call", "xfailed"): "xfailed", ("setup", "xfailed"): "xfailed",
         ("call", "xpassed"): "xpassed", ("setup", "failed"): "errors", ("teardown", "failed"): "errors",
         ("collect", "error"): "errors"}
"""(phase, outcome) of a plugin record -> the count it adds to, as pytest's summary counts them."""
PLUGIN = sandbox.PLUGIN_DIR / "ph_pytest_report.py"
BOOT = ("import sys, importlib.util as u\n"
        "s = u.spec_from_file_location('ph_pytest_report', sys.argv[1])\n"
        "m = sys.modules[s.name] = u.module_from_spec(s)\n"
        "s.loader.exec_module(m)\n"
        "m.main(sys.argv[2:])\n")
"""How every pytest run starts: ph's plugin loaded from its file by path (`python -c BOOT PLUGIN ARGS...`), then
pytest run by it; a repo file named like the plugin is never imported in its place (Python 3.8+)."""
_ORDER = ("failed", "passed", "skipped", "deselected", "xfailed", "xpassed", "errors")


def clear_bytecode(root: Path, judging: list[str]) -> None:
    """Remove the cached bytecode of the judging files (`__pycache__/NAME.*.pyc` beside each `.py` of them) before a
    judging run: the tests are compiled from their source, never from a `.pyc` an earlier run of repo code left
    (one whose header matches the source's size and mtime is loaded whatever it holds). A `__pycache__` that is a
    symlink is removed itself, never followed."""
    stems: dict[Path, set[str]] = {}
    for rel in judging:
        path = Path(root) / rel
        if path.suffix == ".py":
            stems.setdefault(path.parent / "__pycache__", set()).add(path.stem)
    for cache, names in stems.items():
        try:
            fd = os.open(cache, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except FileNotFoundError:
            continue
        except OSError:  # not a folder: a link (or a file) where Python looks for cached bytecode
            if os.path.islink(cache):
                os.unlink(cache)
            continue
        try:
            for entry in os.scandir(fd):
                if entry.name.endswith(".pyc") and entry.name.split(".", 1)[0] in names and not entry.is_dir(
                        follow_symlinks=False):
                    os.unlink(entry.name, dir_fd=fd)
        finally:
            os.close(fd)


def _prune(folder: Path, quiet_for: float = 600.0) -> None:
    """Remove the oldest logs beyond KEPT_LOGS, but never one written in the last `quiet_for` seconds: another ph
    (an eval beside a test session) may still be writing it."""
    now, logs = time.time(), []
    for log in folder.glob("pytest-*.log"):
        try:
            logs.append((log.stat().st_mtime, log))
        except FileNotFoundError:  # another ph removed it meanwhile
            continue
    for mtime, old in sorted(logs)[:-KEPT_LOGS]:
        if now - mtime > quiet_for:
            old.unlink(missing_ok=True)


def run_in_tree(ws, targets: list[str] | None, ctx) -> TestRun:
    """`run_pytest` in the user's tree (a `Workspace`, with the `Context`'s time limit and interpreter), announced
    on the workspace's event sink: the view shows tests running, and its end summary counts failing tests. No
    targets means the job's suite (`Context.suite`: all tests unless the job named some)."""
    targets = targets or ctx.suite
    ws.emit("phase", name="running tests")
    run = run_pytest(ws.root, targets, timeout=ctx.test_timeout, python=ctx.python, readonly=judge_files(ws))
    ws.emit("tests", run=run, targets=list(targets or []))
    check_judge(ws)
    return run


def judge_files(ws) -> list[str] | None:
    """Fix mode's test files and test config (repo-relative), which every run of repo code mounts read-only."""
    return ws.guard.files() if ws.guard is not None else None


def check_judge(ws) -> None:
    """After every run of repo code in the tree: Invalid when a test file or test config is not as it was."""
    touched = ws.guard.changed_in(ws.root) if ws.guard is not None else []
    if touched:  # checked after every run, not only at the end: the judge may not change under the run
        raise Invalid(f"test files or test config changed during a test run: {', '.join(touched[:5])}")


def _log_path() -> Path:
    """A new private log file in ph's per-user log directory (the oldest logs beyond KEPT_LOGS are removed)."""
    folder = Path(tempfile.gettempdir()) / f"ph-test-logs-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
        st = folder.lstat()
        if not folder.is_dir() or folder.is_symlink() or st.st_uid != os.getuid() or st.st_mode & 0o077:
            raise PermissionError(f"{folder} is not ph's own private directory")
        _prune(folder)
    except OSError:
        folder = Path(tempfile.mkdtemp(prefix="ph-test-logs-"))
    fd, name = tempfile.mkstemp(prefix="pytest-", suffix=".log", dir=folder)
    os.close(fd)
    return Path(name)


def head_tail(text: str, max_chars: int, max_lines: int = 256) -> str:
    """At most `max_lines` lines and `max_chars` characters: the head and the tail, with an omitted-lines marker."""
    lines = text.splitlines(keepends=True)
    if len(lines) > max_lines:
        head = max_lines // 3
        tail = max_lines - head - 1
        text = "".join([*lines[:head], f"... [{len(lines) - head - tail} lines omitted] ...\n", *lines[-tail:]])
    return truncate(text, max_chars)


def parse_pytest_output(text: str, exit_code: int, timed_out: bool = False) -> TestRun:
    """Build a TestRun from pytest's `-q --tb=short -rfE` output."""
    counts: dict[str, int] = {}
    found = list(SUMMARY.finditer(text))
    summary_line = found[-1].group(0).strip() if found else ""
    for n, kind in COUNT.findall(found[-1].group(1) if found else ""):
        counts["errors" if kind.startswith("error") else kind] = int(n)
    failing = list(dict.fromkeys(m.group(2) for m in NODE_LINE.finditer(text)))
    return TestRun(exit_code=exit_code, counts=counts, failing=failing, first_traceback=_first_section(text),
                   output=text, timed_out=timed_out, summary_line=summary_line)


def _first_section(text: str) -> str:
    headers = list(SECTION.finditer(text))
    if not headers:
        return ""
    start = headers[0].start()
    end = headers[1].start() if len(headers) > 1 else len(text)
    summary = text.find("=== short test summary", start)
    if summary != -1 and summary < end:
        end = text.rfind("\n", 0, summary) + 1 or summary
    return text[start:end].strip()

