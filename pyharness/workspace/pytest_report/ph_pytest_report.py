"""ph's verdict channel: each test's outcome and the session's end, as JSON lines to the file descriptor that ph
opened for this run and named in PH_REPORT_FD (loaded with `-p ph_pytest_report`).

The descriptor leads to a file outside everything the sandboxed run may open by path, so code under test cannot
write a report by opening it, and a run that prints a fake summary line and exits 0 (`os._exit`) leaves no `end`
record: ph reads the verdict from here, never from the process's stdout.
"""

import json
import os

_out = None


def pytest_configure(config):
    global _out
    fd = os.environ.pop("PH_REPORT_FD", "")
    if fd.isdigit() and _out is None:
        _out = os.fdopen(int(fd), "w", buffering=1, encoding="utf-8", closefd=True)


def _emit(record):
    if _out is not None:
        _out.write(json.dumps(record) + "\n")


def pytest_collectreport(report):
    if report.failed:
        _emit({"nodeid": report.nodeid, "when": "collect", "outcome": "error"})


def pytest_runtest_logreport(report):
    outcome = report.outcome
    if hasattr(report, "wasxfail"):
        outcome = "xfailed" if report.skipped else "xpassed"
    if report.when == "call" or outcome not in ("passed",):
        _emit({"nodeid": report.nodeid, "when": report.when, "outcome": outcome})


def pytest_sessionfinish(session, exitstatus):
    _emit({"end": int(exitstatus), "collected": session.testscollected})
