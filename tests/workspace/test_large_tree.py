"""A 1,200-file tree (generated here, no network): the fix context ranks the failing code first and stays small,
list and search are capped, build output and environments never show, and a step's state hash reads only the
files that changed."""

import builtins
import io
import os
import shutil
from pathlib import Path

import pytest

from pyharness.actions import CORE
from pyharness.actions.base import Context
from pyharness.actions.list_files import MAX_ENTRIES
from pyharness.actions.search import MAX_MATCHES
from pyharness.evals.report import LARGE_SUFFIX, rows, summarise
from pyharness.localise.filerank import rank, traceback_files, words
from pyharness.loop.jobs import Job
from pyharness.loop.prompts import MAP_FILES
from pyharness.workspace.gitops import snapshot_repo
from pyharness.workspace.tree import Workspace

PACKAGES, MODULES = 70, 17
BUG = "pkg/sub17/mod05.py"
SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
IGNORED = ("build/lib/pkg/harvest.py", ".tox/py311/lib/harvest.py", "myenv/lib/harvest.py", "pkg.egg-info/SOURCES.txt",
           "pkg/__pycache__/harvest.cpython-311.pyc", "generated/harvest.py", "node_modules/x/harvest.js")
TASK = "Make the failing tests in tests/test_harvest.py pass: fix the bug in the code, not the tests."


def word(n: int) -> str:
    """A distinct made-up word per n (so every module defines names no other module has)."""
    return SYLLABLES[n % 70] + SYLLABLES[(n // 70) % 70] + SYLLABLES[(n * 7 + 3) % 70]


def module_source(n: int) -> str:
    a, b, c = word(3 * n), word(3 * n + 1), word(3 * n + 2)
    return (f'"""Module {n}."""\n\nRATE_{n} = {n}\n\n\ndef {a}_{b}(values):\n    return sum(values) + RATE_{n}\n\n\n'
            f"class {c.title()}{a.title()}:\n    def {b}_{c}(self):\n        return {n}\n")


def make_tree(root: Path) -> Path:
    """70 packages of 17 modules (plus __init__s and tests: over 1,200 files), one bug, one failing test, and the
    build output, environments and caches a real checkout collects."""
    n = 0
    for p in range(PACKAGES):
        package = root / "pkg" / f"sub{p:02d}"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("", encoding="utf-8")
        for m in range(MODULES):
            (package / f"mod{m:02d}.py").write_text(module_source(n), encoding="utf-8")
            n += 1
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / BUG).write_text(module_source(999) + '\n\ndef harvest_quota(values):\n    """The last value."""\n'
                            "    return values[len(values)]\n", encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_harvest.py").write_text(
        f"from {BUG[:-3].replace('/', '.')} import harvest_quota\n\n\ndef test_harvest_quota():\n"
        "    assert harvest_quota([1, 2, 3]) == 3\n", encoding="utf-8")
    for i in range(40):
        (root / "tests" / f"test_mod{i:02d}.py").write_text(f"def test_{word(i)}():\n    assert True\n",
                                                            encoding="utf-8")
    for rel in IGNORED:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("def harvest_quota(values):\n    return 0\n", encoding="utf-8")
    (root / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n", encoding="utf-8")
    (root / ".gitignore").write_text("generated/\n", encoding="utf-8")
    (root / "data.txt").write_text(("harvest_quota " * 80 + "\n") * 1000, encoding="utf-8")  # 1.1 MB
    old = 1_600_000_000  # a checkout made long ago: nothing is "just written" (see treecache.RACY_NS)
    for path in root.rglob("*"):
        os.utime(path, (old, old), follow_symlinks=False)
    return root


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("large") / "repo")


@pytest.fixture(scope="module")
def git_tree(tree, tmp_path_factory) -> Path:
    """The same tree committed whole, build output included (as an unpacked sdist is)."""
    repo = tmp_path_factory.mktemp("large-git") / "repo"
    shutil.copytree(tree, repo, symlinks=True)
    snapshot_repo(repo, "everything, build output too")
    return repo


def run(ws: Workspace, name: str, **args) -> str:
    action = CORE[name]
    return action.run(action.args(**args), Context(workspace=ws)).text


def test_the_tree_is_large(tree):
    assert sum(1 for _ in tree.rglob("*.py")) >= 1200


@pytest.mark.parametrize("which", ["tree", "git_tree"])
def test_ignored_folders_never_listed_searched_or_ranked(which, request):
    ws = Workspace(request.getfixturevalue(which))
    files = ws.files()
    assert len(files) > 1200
    assert not [f for f in files if f in IGNORED or f.startswith(("build/", ".tox/", "myenv/", "pkg.egg-info/",
                                                                  "generated/", "node_modules/"))]
    found = run(ws, "search", pattern="def harvest_quota")
    assert found.startswith("1 matches") and f"{BUG}:" in found
    listing = run(ws, "list", path=".")
    assert "build/" not in listing and "myenv/" not in listing and "egg-info" not in listing
    assert not set(IGNORED) & set(rank(ws, "harvest quota"))


def test_traceback_names_the_suspect_first_then_bm25_ranks_by_names(tree):
    ws = Workspace(tree)
    traceback = (f'tests/test_harvest.py:5: in test_harvest_quota\n    assert harvest_quota([1, 2, 3]) == 3\n'
                 f'{BUG}:20: in harvest_quota\n    return values[len(values)]\nE   IndexError: list index out of range')
    assert traceback_files(traceback, ws.files()) == [BUG, "tests/test_harvest.py"]
    assert rank(ws, TASK, traceback)[0] == BUG
    # No traceback: the names a module defines still find it among 1,200 (module 700's words, split from its names).
    target = 700
    where = f"pkg/sub{target // MODULES:02d}/mod{target % MODULES:02d}.py"
    query = f"the total of {word(3 * target).title()}{word(3 * target + 1).title()} is wrong"
    assert rank(ws, query)[:1] == [where]
    assert words("CosetTable.scan_and_fill(HTTPServer)") == ["coset", "table", "scan", "fill", "http", "server"]


def test_fix_context_shows_the_suspect_and_stays_small(tree, tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(tree, repo, symlinks=True)
    ws = Workspace(repo, protect_tests=True)
    job = Job("fix", task=TASK, tests=["tests/test_harvest.py"])
    message = job.prepare(ws, Context(workspace=ws, test_timeout=120))
    files = message.split("Repository files:\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert files[0].startswith(f"{BUG}: ") and "harvest_quota()" in files[0]
    assert len(files) == MAP_FILES + 1 and files[-1].startswith(f"... {len(ws.files()) - MAP_FILES} more files;")
    assert "harvest_quota is defined in pkg/sub17/mod05.py" in message
    assert len(message) / 4 < 1500, f"the first message is about {len(message) // 4} tokens"


def test_list_is_capped_and_summarised_by_folder(tree):
    ws = Workspace(tree)
    top = run(ws, "list", path=".").splitlines()
    assert top[0].startswith(f"{len(ws.files())} files under ./, too many")
    assert f"pkg/ ({PACKAGES * (MODULES + 1) + 1} files)" in top and "tests/ (41 files)" in top
    package = run(ws, "list", path="pkg").splitlines()
    assert len(package) == MAX_ENTRIES + 2
    assert package[-1] == f"... {PACKAGES + 1 - MAX_ENTRIES} more entries; list a folder or search"
    small = run(ws, "list", path="pkg/sub03").splitlines()
    assert small[0] == f"{MODULES + 1} files under pkg/sub03/:" and len(small) == MODULES + 2


def test_search_stops_early_and_skips_big_files(tree, monkeypatch):
    ws = Workspace(tree)
    ws.files()
    opened = count_opens(monkeypatch)
    found = run(ws, "search", pattern="def ").splitlines()
    assert found[0].startswith("at least ") and "more matches not shown" in found[-2]
    assert found[-1] == "(1 file(s) over 1 MB not searched)" and len(found) == MAX_MATCHES + 3
    read = {p for p in opened if p.endswith(".py")}
    assert 0 < len(read) < len(ws.files()) / 8, "the search read on past its cap"
    big = run(ws, "search", pattern="harvest_quota", path="data.txt")
    assert big.startswith("No match") and "(1 file(s) over 1 MB not searched)" in big


def count_opens(monkeypatch) -> list[str]:
    """Every file opened from now on, by builtins.open or io.open (what pathlib uses)."""
    opened: list[str] = []
    real = io.open

    def counting(file, *args, **kwargs):
        opened.append(str(file))
        return real(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting)
    monkeypatch.setattr(io, "open", counting)
    return opened


def files_read(opened: list[str], repo: Path) -> list[str]:
    """The repo's files among those opened (not the .gitignore files the listing reads, not a subprocess's pipes)."""
    return [p for p in opened if p.startswith(f"{repo}/") and not p.endswith(".gitignore")]


def test_state_hash_reads_only_changed_files(tree, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    shutil.copytree(tree, repo, symlinks=True)
    ws = Workspace(repo)
    first = ws.state_hash()
    opened = count_opens(monkeypatch)
    assert ws.state_hash() == first and files_read(opened, repo) == []
    target = repo / "pkg" / "sub03" / "mod04.py"
    stamp = target.stat()
    before = target.read_text(encoding="utf-8")
    target.write_text(before.replace("return", "retURN", 1), encoding="utf-8")  # same size ...
    os.utime(target, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))  # ... and the same mtime: ctime still moves
    opened.clear()
    second = ws.state_hash()
    assert second != first
    assert files_read(opened, repo) == [str(target)]
    ws.write_text("pkg/sub03/mod04.py", before)
    assert ws.state_hash() == first  # back to the earlier content: the same state, as the loop detector expects


def test_eval_summary_adds_a_large_tree_row():
    def record(task, ok, large=None, config="harness=on"):
        r = {"suite": "mutants", "task": task, "model": "m", "config": config, "repeat": 0, "pass_strict": ok,
             "pass_lenient": ok, "steps": 2, "prompt_tokens": 100, "completion_tokens": 10, "wall_seconds": 1.0,
             "seconds": 1.0}
        return r if large is None else {**r, "large": large}

    records = [record("toolz-a", True, False), record("sympy-b", True, True), record("sympy-c", False, True),
               record("sympy-d", False), record("toolz-e", True), record("toolz-a", False, False, "harness=off")]
    summaries = summarise(records)
    assert [s.config for s in summaries] == ["harness=on", "harness=off", "harness=on" + LARGE_SUFFIX]
    large = summaries[-1]
    assert (large.tasks, large.passed) == (3, 1)  # sympy-d is told by its id (a record older than the field)
    assert rows(summaries)[-1][4] == "33.3%"


def test_an_edit_in_a_module_bigger_than_the_write_cap_carries_only_its_change(tmp_path):
    from pyharness.errors import ActionError
    from pyharness.workspace.tree import Workspace

    body = "".join(f"def f{i}(x):\n    return x + {i}\n\n\n" for i in range(4000))  # ~120 KB, like more_itertools
    (tmp_path / "big.py").write_text(body)
    ws = Workspace(tmp_path)
    cap = ws.limit.max_bytes_per_write
    assert len(body) > cap
    ws.write_text("big.py", body.replace("return x + 17\n", "return x - 17\n"))  # one line changed: written
    assert "return x - 17\n" in (tmp_path / "big.py").read_text() and ws.bytes_written < 10
    with pytest.raises(ActionError, match=f"big.py refused: {cap + 1} bytes is over the limit of {cap}"):
        ws.write_text("big.py", ws.read_text("big.py").replace("return x - 17\n", "return x - 17\n" + "#" * cap + "\n"))
