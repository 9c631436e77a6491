"""The safety suite's shared tree and tally (`make safety`; docs/safety-cases.md lists the cases).

Every case test takes the `tree` fixture: a real repo under tmp_path with an `outside/` sibling whose files each
hold a unique canary. When the test ends the fixture checks, and fails the test on, any of:
- a byte changed, created or deleted under `outside/` (compared by lstat walk, links never followed);
- an outside file's canary seen in what the test process printed, in any file under the repo's `.ph/`, or in
  any text the test handed to `tree.seen(...)` (observations, transcripts, messages);
- a process started during the test (a descendant of this process, or a pid handed to `tree.track_pid`) still
  alive 2 s after the test.
Mark a test with `@pytest.mark.case(N)` (N from docs/safety-cases.md; several numbers allowed). A case that is a known
gap is marked `@pytest.mark.gap(N, "reason")` on a test that shows the gap; it is reported, never counted as held.
The terminal summary prints one line: cases tried, held, gaps, bytes changed outside, bytes of outside files read,
processes left behind; `out/safety.json` keeps the same figures.
"""

import dataclasses
import json
import time
from pathlib import Path

import psutil
import pytest
from safetree import SafeTree, _changed_bytes, _snapshot

TOTAL_CASES = 92
"""The three lists of docs/safety-cases.md: 1-59, the second list 60-76, the third 77-92."""
THIRD_LIST = range(77, 92)
"""Case 92 ("each of 77-91 is a test here") holds when every one of these was tried and held in the session."""
_TALLY = {"cases": {}, "gaps": {}, "changed_outside": 0, "read_outside": 0, "left_processes": 0}


def pytest_configure(config):
    config.addinivalue_line("markers", "case(*numbers): the docs/safety-cases.md case(s) this test holds ph to")
    config.addinivalue_line("markers", "gap(number, reason): a docs/safety-cases.md case ph does not hold yet")


@pytest.fixture(params=["as-is", "user-namespace"])
def flow(request, monkeypatch):
    """The sandbox as this machine runs it ('as-is'); as root also the way a root run goes where idmapped mounts
    are missing ('user-namespace': root stays uid 0 inside a user namespace), so both paths are held."""
    from pyharness.workspace import sandbox

    if request.param == "user-namespace":
        real = sandbox.support()
        if not real.drops_root:
            pytest.skip("not a root run that drops privileges: 'as-is' is the user-namespace sandbox already")
        monkeypatch.setattr(sandbox, "support", lambda: dataclasses.replace(real, drops_root=False))
    return request.param


def _descendants() -> set[int]:
    try:
        return {p.pid for p in psutil.Process().children(recursive=True)}
    except psutil.Error:
        return set()


@pytest.fixture
def tree(tmp_path, capfd):
    """A SafeTree; its end-of-test checks are described in this module's docstring."""
    t = SafeTree(base=tmp_path, repo=tmp_path / "repo", outside=tmp_path / "outside")
    t.repo.mkdir()
    t.outside.mkdir()
    t.outside_file("secret.txt", "password=hunter2\n")
    procs_before = _descendants()
    yield t
    # processes: give the code under test 2 s to have cleaned up
    deadline = time.monotonic() + 2.0
    while True:
        alive = [pid for pid in (_descendants() - procs_before) | set(t.pids) if _alive(pid)]
        if not alive or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for pid in alive:  # do not leak them into the rest of the session
        try:
            psutil.Process(pid).kill()
        except psutil.Error:
            pass
    after = _snapshot(t.outside)
    changed = _changed_bytes(t.baseline, after)
    out, err = capfd.readouterr()
    texts = [out, err, *t.seen_texts]
    ph_dir = t.repo / ".ph"
    if ph_dir.is_dir() and not ph_dir.is_symlink():
        for p in ph_dir.rglob("*"):
            if p.is_file() and not p.is_symlink():
                texts.append(p.read_text(encoding="utf-8", errors="replace"))
    leaked = {rel for canary, rel in t.canaries.items() if any(canary in text for text in texts)}
    read = sum((t.outside / rel).stat().st_size if (t.outside / rel).exists() else 1 for rel in leaked)
    _TALLY["changed_outside"] += changed
    _TALLY["read_outside"] += read
    _TALLY["left_processes"] += len(alive)
    problems = []
    if changed:
        problems.append(f"{changed} bytes changed under outside/")
    if leaked:
        problems.append(f"outside file(s) read: {sorted(leaked)}")
    if alive:
        problems.append(f"{len(alive)} process(es) left behind: {alive}")
    if problems:
        pytest.fail("; ".join(problems), pytrace=False)


def _alive(pid: int) -> bool:
    try:
        proc = psutil.Process(pid)
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "setup" and report.passed:
        return
    if report.when == "call" or report.failed or report.skipped:
        for mark in item.iter_markers("gap"):
            _TALLY["gaps"][int(mark.args[0])] = mark.args[1] if len(mark.args) > 1 else ""
        if report.skipped and not item.get_closest_marker("gap"):
            return  # a test that does not apply here (not root, no tmux) neither holds nor breaks its case
        ok = report.passed and not report.skipped
        for mark in item.iter_markers("case"):
            for n in mark.args:
                held = _TALLY["cases"].get(int(n), True)
                _TALLY["cases"][int(n)] = held and ok


def pytest_terminal_summary(terminalreporter):
    if not _TALLY["cases"] and not _TALLY["gaps"]:
        return
    cases = _TALLY["cases"]
    if all(cases.get(n) is not None for n in THIRD_LIST):
        cases[92] = all(cases[n] for n in THIRD_LIST)
    gaps = {n: r for n, r in _TALLY["gaps"].items()}
    held = sorted(n for n, ok in cases.items() if ok and n not in gaps)
    broke = sorted(n for n, ok in cases.items() if not ok and n not in gaps)
    tried = sorted(set(cases) | set(gaps))
    missing = sorted(set(range(1, TOTAL_CASES + 1)) - set(tried))
    line = (f"safety: {len(tried)} of {TOTAL_CASES} cases tried, {len(held)} held, {len(broke)} broke, "
            f"{len(gaps)} known gaps; bytes changed outside the repo: {_TALLY['changed_outside']}; "
            f"bytes of outside files read: {_TALLY['read_outside']}; "
            f"processes left behind: {_TALLY['left_processes']}")
    terminalreporter.write_line(line)
    if broke:
        terminalreporter.write_line(f"safety: broke: {broke}")
    if gaps:
        terminalreporter.write_line("safety: gaps: " + "; ".join(f"{n}: {r}" for n, r in sorted(gaps.items())))
    if missing:
        terminalreporter.write_line(f"safety: not tried: {missing}")
    out = Path(__file__).resolve().parents[2] / "out"
    out.mkdir(exist_ok=True)
    (out / "safety.json").write_text(json.dumps({"line": line, "held": held, "broke": broke, "gaps": gaps,
                                                 "not_tried": missing, **{k: _TALLY[k] for k in (
                                                     "changed_outside", "read_outside", "left_processes")}},
                                                indent=1), encoding="utf-8")
