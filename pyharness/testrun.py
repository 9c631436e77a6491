"""Run pytest in a sandboxed subprocess and reduce its log to counts plus one traceback."""

import os
import re
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.harness.noise import PYTEST_QUIET_ARGS, QUIET_ENV, normalise, truncate

SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH", re.IGNORECASE)
COUNT = re.compile(r"(\d+) (passed|failed|errors?|skipped|xfailed|xpassed|deselected)")
NODE_LINE = re.compile(r"^(FAILED|ERROR) (\S+?)(?: - .*)?$", re.MULTILINE)
SECTION = re.compile(r"^_{3,} (.+?) _{3,}$", re.MULTILINE)
OUTPUT_CAP = 400_000


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

    @property
    def green(self) -> bool:
        """True when tests ran and none failed (pytest exit 5, no tests, is not green)."""
        return self.exit_code == 0 and not self.timed_out

    def summary(self) -> str:
        """One line: counts or what went wrong."""
        if self.timed_out:
            return "the test run timed out (is there an endless loop?)"
        if self.exit_code == 5:
            return "no tests ran (pytest found no tests)"
        parts = [f"{n} {k}" for k, n in self.counts.items() if n]
        return ", ".join(parts) or f"pytest exited with code {self.exit_code}"

    def error_line(self) -> str:
        """The failure's last `E` line (the exception or the assertion), or '' for a green run."""
        lines = [ln.strip()[1:].strip() for ln in self.first_traceback.splitlines() if ln.strip().startswith("E ")]
        raised = [ln for ln in lines if EXCEPTION_LINE.match(ln) and not ln.startswith("AssertionError")]
        return (raised or [ln for ln in lines if ln] or [""])[-1 if raised else 0]

    def observation(self, max_chars: int = 2500) -> str:
        """Counts plus the first failing test's traceback, compacted: what the model sees."""
        if self.green:
            return f"All tests passed: {self.summary()}."
        lines = [f"Tests failed: {self.summary()}."]
        if self.failing:
            more = f" (and {len(self.failing) - 1} more)" if len(self.failing) > 1 else ""
            lines.append(f"First failing test: {self.failing[0]}{more}")
        if self.first_traceback:
            lines.append(truncate(self.first_traceback, max_chars))
        elif self.output and not self.timed_out:
            lines.append(truncate(self.output, max_chars))
        return "\n".join(lines)


def run_pytest(root: Path, targets: list[str] | None = None, *, timeout: float = 60.0,
               python: str | None = None) -> TestRun:
    """Run pytest on `targets` (default: the whole suite) inside `root` in a new process session."""
    cmd = [python or sys.executable, "-m", "pytest", *PYTEST_QUIET_ARGS, "--tb=short", "-rfE", *(targets or [])]
    env = {k: v for k, v in os.environ.items() if not SECRET_NAME.search(k)}
    env.update(QUIET_ENV)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        raw, _ = proc.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        raw, _ = proc.communicate()
        timed_out = True
    except BaseException:
        _kill_group(proc)
        proc.wait()
        raise
    text = normalise(raw[:OUTPUT_CAP].decode("utf-8", errors="replace"), root=str(root) + "/")
    return parse_pytest_output(text, proc.returncode if not timed_out else -1, timed_out)


def parse_pytest_output(text: str, exit_code: int, timed_out: bool = False) -> TestRun:
    """Build a TestRun from pytest's `-q --tb=short -rfE` output."""
    counts: dict[str, int] = {}
    tail = text.strip().splitlines()[-1] if text.strip() else ""
    for n, kind in COUNT.findall(tail):
        counts["errors" if kind.startswith("error") else kind] = int(n)
    failing = list(dict.fromkeys(m.group(2) for m in NODE_LINE.finditer(text)))
    return TestRun(exit_code=exit_code, counts=counts, failing=failing, first_traceback=_first_section(text),
                   output=text, timed_out=timed_out)


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


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
