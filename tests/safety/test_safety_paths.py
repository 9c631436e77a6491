"""Path containment, docs/safety-cases.md cases 1-13: every path goes through pyharness/workspace/paths.py's one
resolver."""

import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from safetree import _snapshot

from pyharness.actions.base import Context
from pyharness.errors import ActionError
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace.paths import PolicyError
from pyharness.workspace.paths import resolve as resolve_path
from pyharness.workspace.tree import Workspace

LAYERS = "parse,repair,validate,steer,context,lint"


def drive(tree, replies: list[str], mode: str = "run") -> tuple[object, list[dict]]:
    """Run a job on tree.repo with scripted replies; returns (result, turn records); hands all text to tree.seen."""
    result = run_job(tree.repo, mode, "change the code", ScriptedModel(replies=[*replies, 'Action: done {}']),
                     config=AgentConfig(max_steps=len(replies) + 1), harness=HarnessConfig.parse_spec("on", LAYERS))
    records = read_transcript(Path(result.transcript))
    tree.seen(result.reason, *(r.get("observation", "") for r in records))
    return result, [r for r in records if r["event"] == "turn"]


def state(tree) -> dict:
    """The repo tree (links unfollowed) without ph's own .ph/ folder (a driven run writes its transcript there)."""
    return {k: v for k, v in _snapshot(tree.repo).items() if k != ".ph" and not k.startswith(".ph/")}


def write(path: str, text: str = "x = 1\n") -> str:
    return f'Action: write {{"path": {path!r}}}\n```\n{text}```'.replace("'", '"')


def refused(turn: dict, *words: str) -> None:
    """A refusal as docs/safety-cases.md defines it, as far as one turn shows it: ok=false, naming the path and rule."""
    assert turn["ok"] is False, turn["observation"]
    for word in words:
        assert word in turn["observation"], turn["observation"]


def call(ws: Workspace, action: str, **args):
    from pyharness.actions import CORE

    spec = CORE[action]
    return spec.run(spec.args(**args), Context(workspace=ws))


@pytest.mark.case(1)
def test_write_dotdot_outside_is_refused(tree):
    before = state(tree)
    result, turns = drive(tree, [write("../outside.txt"), write("ok.py")])
    refused(turns[0], "../outside.txt", "outside the repo")
    assert not (tree.base / "outside.txt").exists()
    assert (tree.repo / "ok.py").read_text() == "x = 1\n"  # the run went on
    (tree.repo / "ok.py").unlink()
    assert state(tree) == before


@pytest.mark.case(2)
def test_absolute_paths(tree):
    tree.write("a.py", "a = 1\n")
    ws = Workspace(tree.repo)
    before = tree.repo_hash()
    with pytest.raises(PolicyError, match="outside the repo"):
        ws.write_text(str(tree.outside / "abs.txt"), "x\n")
    with pytest.raises(PolicyError, match="/etc/passwd.*outside the repo"):
        ws.read_text("/etc/passwd")
    assert not (tree.outside / "abs.txt").exists()
    assert tree.repo_hash() == before
    # documented choice (pyharness/workspace/paths.py): an absolute path inside the repo is accepted
    assert ws.read_text(str(tree.repo / "a.py")) == "a = 1\n"
    ws.write_text(str(tree.repo / "a.py"), "a = 2\n")
    assert (tree.repo / "a.py").read_text() == "a = 2\n"


@pytest.mark.case(3)
def test_write_through_dir_symlink_is_refused(tree):
    (tree.repo / "link").symlink_to("../outside")
    before = state(tree)
    result, turns = drive(tree, [write("link/escape.txt")])
    refused(turns[0], "link/escape.txt", "outside the repo")
    assert not (tree.outside / "escape.txt").exists()
    assert state(tree) == before


@pytest.mark.case(4)
def test_file_symlink_to_outside_secret_read_and_write_refused(tree):
    (tree.repo / "s.txt").symlink_to("../outside/secret.txt")
    before = state(tree)
    result, turns = drive(tree, ['Action: read {"path": "s.txt"}', write("s.txt", "pwned\n"),
                                 'Action: search {"pattern": "CANARY"}', 'Action: list {"path": "."}'])
    refused(turns[0], "s.txt", "outside the repo")
    refused(turns[1], "s.txt", "outside the repo")
    assert "No match" in turns[2]["observation"]
    assert "s.txt" not in turns[3]["observation"]
    assert state(tree) == before


@pytest.mark.case(4, 6)
def test_audit_reproduction_self_loop_then_dotdot(tree):
    """The audit: with `self -> self` and `creds -> ../secret.txt`, `read self/../creds` returned the outside file."""
    (tree.repo / "self").symlink_to("self")
    (tree.repo / "creds").symlink_to("../outside/secret.txt")
    ws = Workspace(tree.repo)
    for path in ("creds", "self/../creds", "self/../../outside/secret.txt"):
        with pytest.raises(PolicyError) as err:
            ws.read_text(path)
        tree.seen(str(err.value))
        assert path in str(err.value)


@pytest.mark.case(5)
def test_dangling_symlink_write_refused_and_creates_nothing(tree):
    (tree.repo / "new.txt").symlink_to("../outside/new.txt")
    before = state(tree)
    result, turns = drive(tree, [write("new.txt", "hello\n")])
    refused(turns[0], "new.txt", "outside the repo")
    assert not (tree.outside / "new.txt").exists()
    assert state(tree) == before


@pytest.mark.case(6)
def test_symlink_loop_is_a_clear_error_fast(tree):
    (tree.repo / "a").symlink_to("b")
    (tree.repo / "b").symlink_to("a")
    ws = Workspace(tree.repo)
    for path, op in (("a", ws.read_text), ("a/x.py", lambda p: ws.write_text(p, "x\n")), ("b/../a", ws.read_text)):
        started = time.monotonic()
        with pytest.raises(PolicyError, match="symlink loop"):
            op(path)
        assert time.monotonic() - started < 1.0
    result, turns = drive(tree, ['Action: read {"path": "a"}', 'Action: list {"path": "."}'])
    refused(turns[0], "symlink loop")
    assert turns[1]["ok"] is True


@pytest.mark.case(7)
def test_prefix_sibling_is_refused(tree):
    evil = tree.base / "repo-evil"
    evil.mkdir()
    before = tree.repo_hash()
    ws = Workspace(tree.repo)
    with pytest.raises(PolicyError, match="outside the repo"):
        ws.write_text("../repo-evil/x", "x\n")
    with pytest.raises(PolicyError, match="outside the repo"):
        ws.write_text(str(evil / "x"), "x\n")
    assert not (evil / "x").exists()
    assert tree.repo_hash() == before


@pytest.mark.case(8)
@pytest.mark.parametrize("path", ["a\0b.py", "a\nb.py", "a\rb.py", "a\tb.py", "x" * 4097, "d/" + "y" * 256,
                                  "FAIL tests/test_x.py", "FAILED tests/test_x.py::test_a - assert 1 == 2",
                                  "ERROR tests/test_x.py", "tests/test_x.py::test_a"])
def test_bad_path_text_refused_before_any_filesystem_call(tree, path, monkeypatch):
    ws = Workspace(tree.repo)
    before = tree.repo_hash()

    def no_fs(*a, **k):
        raise AssertionError("a filesystem call was made")

    monkeypatch.setattr(os, "lstat", no_fs)  # the case: refused before any filesystem call
    for op in (ws.read_text, lambda p: ws.write_text(p, "x\n"), ws.resolve):
        with pytest.raises(PolicyError) as err:
            op(path)
        assert "refused" in str(err.value)
    monkeypatch.undo()
    assert tree.repo_hash() == before


@pytest.mark.case(8)
def test_long_path_through_the_loop_is_a_message_not_a_traceback(tree):
    result, turns = drive(tree, [write("d/" + "y" * 300 + ".py"), write("a\\tb.py".replace("\\t", "\t"))])
    refused(turns[0], "over 255")
    assert "Traceback" not in turns[0]["observation"]
    assert turns[1]["ok"] is False


@pytest.mark.case(9)
def test_home_env_url_and_percent_paths_not_expanded(tree):
    ws = Workspace(tree.repo)
    home_before = sorted(os.listdir(os.path.expanduser("~")))
    for path in ("~/x", "$HOME/x", "${HOME}/x", "file:///etc/passwd"):
        with pytest.raises(PolicyError, match="not expanded"):
            ws.write_text(path, "x\n")
        with pytest.raises(PolicyError):
            ws.read_text(path)
    assert sorted(os.listdir(os.path.expanduser("~"))) == home_before
    rel, _ = ws.write_text("%2e%2e/x", "literal\n")  # never decoded: a literal folder inside the repo
    assert rel == "%2e%2e/x"
    assert (tree.repo / "%2e%2e" / "x").read_text() == "literal\n"
    assert not (tree.base / "x").exists()


@pytest.mark.case(10)
def test_directory_empty_and_dot_refused(tree):
    (tree.repo / "pkg").mkdir()
    before = state(tree)
    result, turns = drive(tree, [write("pkg"), write(""), write("."), write("pkg/")])
    for turn in turns[:4]:
        assert turn["ok"] is False, turn["observation"]
    assert "folder" in turns[0]["observation"] and "pkg" in turns[0]["observation"]
    assert state(tree) == before


@pytest.mark.case(11)
def test_hard_link_to_outside_file_is_not_written_through(tree):
    outside = tree.outside_file("h.txt", "outside text\n")
    os.link(outside, tree.repo / "h.txt")
    ws = Workspace(tree.repo)
    ws.write_text("h.txt", "new text\n")
    assert (tree.repo / "h.txt").read_text() == "new text\n"
    assert os.stat(tree.repo / "h.txt").st_ino != os.stat(outside).st_ino  # the entry was swapped
    assert outside.read_text().startswith("outside text\n")  # the fixture checks every byte as well


@pytest.mark.case(12)
def test_deep_new_path_created_and_counted_escape_refused(tree):
    ws = Workspace(tree.repo)
    ws.limit.max_files = 1
    rel, _ = ws.write_text("src/new/pkg/mod.py", "x = 1\n")
    assert rel == "src/new/pkg/mod.py" and (tree.repo / rel).read_text() == "x = 1\n"
    assert ws.created_dirs == ["src", "src/new", "src/new/pkg"]
    with pytest.raises(ActionError, match="1 files"):
        ws.write_text("src/other.py", "y = 1\n")
    before = tree.repo_hash()
    with pytest.raises(PolicyError, match="outside the repo"):
        ws.write_text("src/../../x/y", "x\n")
    with pytest.raises(PolicyError, match="outside the repo"):
        ws.write_text("src/missing/../../../x/y", "x\n")
    assert not (tree.base / "x").exists()
    assert tree.repo_hash() == before


# case 13: the property test -------------------------------------------------------------------------------


def _property_tree(base: Path) -> Path:
    """repo/ with inside and outside links, a loop, a dangling link; outside/ beside it."""
    repo, outside = base / "repo", base / "outside"
    if repo.exists():
        return repo
    (repo / "a" / "a").mkdir(parents=True)
    (repo / "a" / "f.txt").write_text("f\n")
    outside.mkdir(exist_ok=True)
    (outside / "o.txt").write_text("o\n")
    (repo / "in").symlink_to("a")
    (repo / "out").symlink_to("../outside")
    (repo / "abs").symlink_to(str(outside))
    (repo / "loop").symlink_to("loop")
    (repo / "dang").symlink_to("../outside/none")
    (repo / "a" / "up").symlink_to("../..")
    return repo


PIECES = st.sampled_from(["a", ".", "..", "/", "\\", "~", " ", "\0", "in", "out", "abs", "loop", "dang", "up",
                          "f.txt", ".git", "repo", "outside"])


@pytest.mark.case(13)
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(PIECES, max_size=12).map("".join))
@example("a/up/outside/o.txt")
@example("loop/../a/f.txt")
@example("in/../../outside/o.txt")
@example("/")
@example("a/f.txt/..")
@example("dang")
@example("abs/../repo/a")
@example("a/up/repo/a/f.txt")
@example(" ")
def test_resolve_property(tmp_path_factory, path):
    base = tmp_path_factory.getbasetemp() / "property"
    base.mkdir(exist_ok=True)
    repo = _property_tree(base)
    root = os.path.realpath(repo)
    try:
        got = resolve_path(Path(root), path)
    except PolicyError:
        return
    real = os.path.realpath(got)
    assert os.path.commonpath([root, real]) == root
