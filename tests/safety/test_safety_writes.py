"""Write limits and atomic writes, docs/safety-cases.md cases 19-27."""

import os
from pathlib import Path

import pytest

from pyharness.actions import CORE
from pyharness.actions.base import Context
from pyharness.errors import ActionError
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace.tree import Workspace, WriteLimit
from pyharness.workspace.undo import undo_last

LAYERS = "parse,repair,validate,steer,context,lint"


def drive(tree, replies: list[str], mode: str = "run"):
    result = run_job(tree.repo, mode, "change the code", ScriptedModel(replies=[*replies, "Action: done {}"]),
                     config=AgentConfig(max_steps=len(replies) + 1), harness=HarnessConfig.parse_spec("on", LAYERS))
    records = read_transcript(Path(result.transcript))
    tree.seen(result.reason, *(r.get("observation", "") for r in records))
    return result, [r for r in records if r["event"] == "turn"]


def act(ws: Workspace, name: str, **args):
    spec = CORE[name]
    return spec.run(spec.args(**args), Context(workspace=ws))


def edit(path: str, search: str, replace: str) -> str:
    return f'Action: edit {{"path": "{path}"}}\n<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE'


@pytest.mark.case(19)
def test_one_byte_over_the_per_write_cap_is_refused(tree):
    tree.write("data.txt", "original")  # no final newline: the write keeps that, so the sizes below are exact
    ws = Workspace(tree.repo)
    cap = ws.limit.max_bytes_per_write
    with pytest.raises(ActionError, match=f"data.txt refused: {cap + 1} bytes is over the limit of {cap}"):
        ws.write_text("data.txt", "x" * (cap + 1))
    assert (tree.repo / "data.txt").read_text() == "original"
    ws.write_text("data.txt", "y" * cap)
    assert (tree.repo / "data.txt").stat().st_size == cap


@pytest.mark.case(20)
def test_file_cap_refuses_the_next_file_and_keeps_earlier_writes_undoable(tree):
    tree.write("keep.py", "k = 0\n")
    cap = WriteLimit().max_files
    writes = [f'Action: write {{"path": "m{i}.py"}}\n```python\nv = {i}\n```' for i in range(cap + 1)]
    result, turns = drive(tree, writes)
    assert all(t["ok"] for t in turns[:cap])
    assert turns[cap]["ok"] is False and f"m{cap}.py" in turns[cap]["observation"]
    assert f"limit of {cap}" in turns[cap]["observation"]
    assert not (tree.repo / f"m{cap}.py").exists()
    assert all((tree.repo / f"m{i}.py").read_text() == f"v = {i}\n" for i in range(cap))
    undo_last(tree.repo)
    assert not any((tree.repo / f"m{i}.py").exists() for i in range(cap + 1))
    assert (tree.repo / "keep.py").read_text() == "k = 0\n"


@pytest.mark.case(21)
def test_per_run_byte_cap(tree):
    ws = Workspace(tree.repo, limit=WriteLimit(max_files=100, max_changed_lines=10_000))
    chunk = ws.limit.max_bytes_per_write
    n = ws.limit.max_run_bytes // chunk
    for i in range(n):
        ws.write_text(f"f{i}.txt", "z" * chunk)
    with pytest.raises(ActionError, match=f"f{n}.txt refused: this run has written {n * chunk} bytes"):
        ws.write_text(f"f{n}.txt", "z" * chunk)
    assert not (tree.repo / f"f{n}.txt").exists()
    assert ws.limit.max_run_bytes == 1_048_576


@pytest.mark.case(22)
def test_nul_and_invalid_text_refused_for_writing(tree):
    tree.write("a.py", "a = 1\n")
    ws = Workspace(tree.repo)
    with pytest.raises(ActionError, match="a.py.*NUL"):
        ws.write_text("a.py", "a = 2\0\n")
    with pytest.raises(ActionError, match="b.py.*not valid text"):
        ws.write_text("b.py", "b = '\udcff'\n")
    assert (tree.repo / "a.py").read_text() == "a = 1\n" and not (tree.repo / "b.py").exists()
    result, turns = drive(tree, ['Action: write {"path": "c.txt", "content": "bad\\u0000byte\\n"}',
                                 'Action: write {"path": "d.txt", "content": "lone \\udcff surrogate\\n"}',
                                 'Action: read {"path": "a.py"}'])
    assert turns[0]["ok"] is False and "NUL" in turns[0]["observation"]
    assert turns[1]["ok"] is False and "not valid text" in turns[1]["observation"]
    assert turns[2]["ok"] is True  # the run went on
    assert not (tree.repo / "c.txt").exists() and not (tree.repo / "d.txt").exists()


@pytest.mark.case(22)
def test_binary_and_huge_files_refused_for_reading(tree):
    (tree.repo / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    with (tree.repo / "big.txt").open("wb") as f:
        f.write(b"a\n" * 5_000_001)  # 10,000,002 bytes
    ws = Workspace(tree.repo)
    with pytest.raises(ActionError, match="img.png.*binary"):
        act(ws, "read", path="img.png")
    with pytest.raises(ActionError, match="big.txt.*over the 10000000 bytes"):
        act(ws, "read", path="big.txt")


@pytest.mark.case(22)
def test_long_reads_are_truncated_with_a_range_notice(tree):
    tree.write("long.py", "".join(f"x{i} = {i}\n" for i in range(1, 2501)))
    tree.write("wide.txt", "w" * 5000 + "\nshort\n")
    ws = Workspace(tree.repo)
    obs = act(ws, "read", path="long.py")
    assert "x2500" not in obs.text and "read long.py with start=" in obs.text and "more lines" in obs.text
    later = act(ws, "read", path="long.py", start=2400, end=2500)
    assert "x2500 = 2500" in later.text
    wide = act(ws, "read", path="wide.txt")
    assert "w" * 5000 not in wide.text and "line cut: 5000 characters" in wide.text and "short" in wide.text


@pytest.mark.case(23)
def test_omission_placeholders_refused(tree):
    tree.write("app.py", "def a():\n    return 1\n\n\ndef b():\n    return 2\n")
    tree.write("web.js", "function a() {\n  return 1;\n}\n")
    before = (tree.repo / "app.py").read_text()
    result, turns = drive(tree, [
        'Action: write {"path": "app.py"}\n```python\ndef a():\n    return 3\n\n# ... rest of code unchanged\n```',
        edit("web.js", "  return 1;\n", "  // ... existing code ...\n  return 2;\n"),
    ])
    assert turns[0]["ok"] is False and "placeholder" in turns[0]["observation"]
    assert "rest of code unchanged" in turns[0]["observation"]
    assert turns[1]["ok"] is False and "placeholder" in turns[1]["observation"]
    assert (tree.repo / "app.py").read_text() == before
    assert (tree.repo / "web.js").read_text() == "function a() {\n  return 1;\n}\n"


@pytest.mark.case(24)
def test_breaking_a_parsing_file_is_refused_but_a_broken_one_may_be_edited(tree):
    tree.write("ok.py", "def f():\n    return 1\n")
    tree.write("broken.py", "def g(:\n    return 2\n")
    result, turns = drive(tree, [
        edit("ok.py", "    return 1\n", "    return (1\n"),
        edit("broken.py", "def g(:\n", "def g():\n"),
    ])
    assert turns[0]["ok"] is False and "ok.py" in turns[0]["observation"]
    assert "would no longer compile" in turns[0]["observation"]
    assert (tree.repo / "ok.py").read_text() == "def f():\n    return 1\n"
    assert turns[1]["ok"] is True
    assert (tree.repo / "broken.py").read_text() == "def g():\n    return 2\n"


@pytest.mark.case(25)
def test_replace_edits_need_exactly_one_match(tree):
    tree.write("m.py", "a = 1\nb = 2\na = 1\nc = 3\n")
    before = (tree.repo / "m.py").read_text()
    result, turns = drive(tree, [
        edit("m.py", "a = 1\n", "a = 9\n"),
        edit("m.py", "zzz = 42\n", "zzz = 43\n"),
        edit("m.py", "b = 2\n", "b = 2\n"),
    ])
    assert turns[0]["ok"] is False and "matches 2 places (lines 1, 3)" in turns[0]["observation"]
    assert turns[1]["ok"] is False and "not found" in turns[1]["observation"]
    assert turns[2]["ok"] is False and "same as the file" in turns[2]["observation"]
    assert (tree.repo / "m.py").read_text() == before


@pytest.mark.case(25)
def test_zero_matches_names_the_closest_line(tree):
    tree.write("m.py", "alpha = 1\nbeta = 2\ngamma = 3\n")
    with pytest.raises(ActionError, match="closest line is 2"):
        act(Workspace(tree.repo), "edit", path="m.py", search="beta = 22\n", replace="beta = 5\n")


@pytest.mark.case(26)
def test_write_and_edit_keep_mode_crlf_and_final_newline(tree):
    script = tree.repo / "run.py"
    script.write_bytes(b"import sys\r\nprint(1)\r\n")
    script.chmod(0o755)
    nofinal = tree.repo / "nofinal.py"
    nofinal.write_bytes(b"x = 1\ny = 2")
    final = tree.repo / "final.txt"
    final.write_bytes(b"one\ntwo\n")
    tree.write("tests/test_ok.py", "def test_ok():\n    assert True\n")
    result, turns = drive(tree, [
        edit("run.py", "print(1)\n", "print(2)\n"),
        edit("nofinal.py", "y = 2\n", "y = 3\n"),
        'Action: write {"path": "final.txt", "content": "one\\nthree"}',
    ])
    assert [t["ok"] for t in turns[:3]] == [True] * 3, [t["observation"] for t in turns]
    assert script.read_bytes() == b"import sys\r\nprint(2)\r\n"
    assert script.stat().st_mode & 0o777 == 0o755
    assert nofinal.read_bytes() == b"x = 1\ny = 3"
    assert final.read_bytes() == b"one\nthree\n"
    ws = Workspace(tree.repo)
    ws.write_text("run.py", "import sys\nprint(3)\n")  # a whole-file write with \n lines
    assert script.read_bytes() == b"import sys\r\nprint(3)\r\n" and script.stat().st_mode & 0o777 == 0o755
    ws.write_text("nofinal.py", "x = 1\ny = 4\n")
    assert nofinal.read_bytes() == b"x = 1\ny = 4"
    ws.write_text("fresh.txt", "new\n")
    assert (tree.repo / "fresh.txt").stat().st_mode & 0o777 == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


@pytest.mark.case(27)
def test_failed_replace_leaves_the_original_and_no_temp_file(tree, monkeypatch):
    target = tree.write("a.py", "original = 1\n")
    target.chmod(0o640)
    before = target.read_bytes()
    ws = Workspace(tree.repo)

    def broken(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="No space"):
        ws.write_text("a.py", "changed = 2\n")
    monkeypatch.undo()
    assert target.read_bytes() == before and target.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in tree.repo.iterdir()) == ["a.py"]
    assert not list(tree.repo.rglob("*.tmp"))


@pytest.mark.case(27)
def test_stale_temp_file_is_cleaned_at_the_next_start(tree):
    tree.write("pkg/a.py", "a = 1\n")
    stale = tree.write("pkg/.a.py.k3j2h1.ph.tmp", "half a fi")  # what a run killed mid-write leaves
    other = tree.write("notes.tmp", "the user's own file\n")
    result, turns = drive(tree, ['Action: read {"path": "pkg/a.py"}'])
    assert not stale.exists()
    assert other.read_text() == "the user's own file\n"
    assert (tree.repo / "pkg/a.py").read_text() == "a = 1\n"
