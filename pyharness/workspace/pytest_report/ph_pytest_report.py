"""ph's verdict channel: each test's outcome and the session's end, as JSON lines to the file descriptor that ph
opened for this run and named in PH_REPORT_FD.

ph starts pytest as `python -c BOOT THIS_FILE ARGS...` (`testrun.BOOT`): this module is loaded from its own file by
path, so no module of the repo, whatever its name, can stand in for it; `main` takes the descriptor out of the
environment before any code of the repo is imported, makes pytest compile test modules and conftest files from
their source (a `.pyc` left in `__pycache__` by an earlier run is never used for them), and runs pytest with this
module registered as a plugin. The descriptor leads to a file outside everything the sandboxed run may open by path,
so code under test cannot write a report by opening it; a run that prints a fake summary line and exits 0
(`os._exit`) leaves no `end` record, and the file is closed once the `end` record is written.

It runs under the project's own interpreter: Python 3.8 or newer, with only pytest installed.
"""

import json
import os
import sys

_out = None


def main(args):
    """Take the report descriptor, stop pytest reading cached bytecode of rewritten modules, run pytest on `args`
    with this module as a plugin, and exit with pytest's code."""
    global _out
    fd = os.environ.pop("PH_REPORT_FD", "")
    if fd.isdigit():
        _out = os.fdopen(int(fd), "w", buffering=1, encoding="utf-8", closefd=True)
    if sys.path and sys.path[0] == "":  # as `python -m pytest` has it: the folder it started in, absolute
        sys.path[0] = os.getcwd()
    _compile_from_source()
    import pytest

    sys.exit(int(pytest.main(list(args), plugins=[sys.modules[__name__]])))


def _compile_from_source():
    """pytest rewrites test modules and conftest files and caches them in `__pycache__`; a cached file whose header
    matches the source (its size and mtime, or its hash) would be used whatever code it holds. The repo's own are
    compiled anew on every run; installed plugins (which pytest rewrites too) keep their cache."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return
    cached = getattr(rewrite, "_read_pyc", None)
    if cached is None:
        return
    repo = os.path.join(os.getcwd(), "")

    def read_pyc(source, *args, **kwargs):
        path = str(source)
        if path.startswith(repo) and "site-packages" not in path and "dist-packages" not in path:
            return None
        return cached(source, *args, **kwargs)

    rewrite._read_pyc = read_pyc


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
    global _out
    _emit({"end": int(exitstatus), "collected": session.testscollected})
    if _out is not None:
        _out.close()
        _out = None
