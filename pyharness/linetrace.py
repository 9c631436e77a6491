"""Which lines of the repo's own code ran during one failing test: a fault-localisation hint for fix mode.

The test runs once more in a subprocess, traced (`sys.settrace`) only while the test itself runs (not
while modules import), recording lines of repo files that are not tests.
"""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from pyharness.harness.noise import QUIET_ENV

TRACER = r"""
import json, os, sys
import pytest
root, out, node = sys.argv[1], sys.argv[2], sys.argv[3]
seen = {}
def tracer(frame, event, arg):
    name = frame.f_code.co_filename
    if not name.startswith(root) or "/tests/" in name or os.path.basename(name).startswith("test_"):
        return None
    if event == "line":
        seen.setdefault(name[len(root):].lstrip("/"), set()).add(frame.f_lineno)
    return tracer
class Trace:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        sys.settrace(tracer)
        try:
            yield
        finally:
            sys.settrace(None)
try:
    pytest.main([node, "-q", "-p", "no:cacheprovider", "--no-header", "-x"], plugins=[Trace()])
finally:
    with open(out, "w") as f:
        json.dump({k: sorted(v) for k, v in seen.items()}, f)
"""


def lines_run(root: Path, node_id: str, timeout: float = 60.0, python: str | None = None) -> dict[str, set[int]]:
    """file -> line numbers executed while `node_id` ran (empty if tracing failed or timed out)."""
    fd, out = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    env = {**os.environ, **QUIET_ENV, "PYTHONPATH": str(root)}
    try:
        subprocess.run([python or sys.executable, "-c", TRACER, str(root), out, node_id], cwd=root, env=env,
                       capture_output=True, timeout=timeout, check=False, start_new_session=True)
        data = json.loads(Path(out).read_text() or "{}")
    except (subprocess.TimeoutExpired, OSError, json.JSONDecodeError):
        return {}
    finally:
        Path(out).unlink(missing_ok=True)
    return {k: set(v) for k, v in data.items()}
