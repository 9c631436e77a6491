"""Protected paths, docs/safety-cases.md cases 14-18: .git, ph's state, fix mode's tests and config, secrets,
gitignored."""

from pathlib import Path

import pytest
from safetree import _snapshot

from pyharness.actions import CORE
from pyharness.actions.base import Context
from pyharness.errors import ActionError
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace import sandbox
from pyharness.workspace.paths import PolicyError
from pyharness.workspace.protect import collected_files
from pyharness.workspace.tree import Workspace

LAYERS = "parse,repair,validate,steer,context,lint"


def drive(tree, replies: list[str], mode: str = "run", task: str = "change the code"):
    result = run_job(tree.repo, mode, task, ScriptedModel(replies=[*replies, "Action: done {}"]),
                     config=AgentConfig(max_steps=len(replies) + 1), harness=HarnessConfig.parse_spec("on", LAYERS),
                     test_timeout=60)
    records = read_transcript(Path(result.transcript))
    tree.seen(result.reason, *(r.get("observation", "") for r in records))
    return result, [r for r in records if r["event"] == "turn"]


def state(tree) -> dict:
    """The repo tree minus ph's own traces: .ph/ and the `.ph/` line a run adds to .git/info/exclude (case 58)."""
    snap = {k: v for k, v in _snapshot(tree.repo).items() if k != ".ph" and not k.startswith(".ph/")}
    if ".git/info/exclude" in snap:
        snap[".git/info/exclude"] = snap[".git/info/exclude"].replace(b".ph/\n", b"")
    return snap


def write(path: str, text: str = "x = 1\n") -> str:
    return f'Action: write {{"path": "{path}"}}\n```\n{text}```'


def run_action(ws: Workspace, name: str, **args):
    spec = CORE[name]
    return spec.run(spec.args(**args), Context(workspace=ws))


@pytest.mark.case(14)
def test_git_paths_refused_in_any_spelling_even_when_absent(tree):
    tree.write("a.py", "a = 1\n")
    tree.git_init()
    (tree.repo / ".git" / "hooks" / "pre-commit").unlink(missing_ok=True)
    paths = [".git/config", ".git/hooks/pre-commit", ".GIT/x", ".git./x", ".git /x", "src/../.git/HEAD",
             "./.git/info/exclude"]
    before = state(tree)
    result, turns = drive(tree, [write(p) for p in paths])
    for path, turn in zip(paths, turns, strict=False):
        assert turn["ok"] is False, turn["observation"]
        assert path in turn["observation"] and "version control" in turn["observation"]
    assert state(tree) == before
    assert not (tree.repo / ".git" / "hooks" / "pre-commit").exists()


@pytest.mark.case(14)
def test_git_reached_through_a_symlink_is_refused(tree):
    tree.git_init()
    (tree.repo / "g").symlink_to(".git")
    ws = Workspace(tree.repo)
    for path in ("g/config", "g/hooks/pre-commit"):
        with pytest.raises(PolicyError, match=r"\.git/.*version control"):
            ws.write_text(path, "[core]\n")
    with pytest.raises(PolicyError, match="version control"):
        ws.read_text("g/config")


@pytest.mark.case(15)
def test_ph_state_config_and_undo_files_refused_even_if_absent(tree):
    tree.write("a.py", "a = 1\n")
    paths = [".ph/config.toml", ".ph/undo/20990101.json", ".ph/runs/x.jsonl", ".PH/x", ".ph.toml", ".phrc"]
    result, turns = drive(tree, [write("a.py", "a = 2\n"), *[write(p, "{}\n") for p in paths],
                                 'Action: read {"path": ".ph/undo"}'])
    assert turns[0]["ok"] is True  # the first write creates the undo log under .ph/undo/
    undo_logs = list((tree.repo / ".ph" / "undo").glob("*"))
    for path, turn in zip(paths, turns[1:], strict=False):
        assert turn["ok"] is False and path in turn["observation"] and "ph's own state" in turn["observation"]
    assert turns[len(paths) + 1]["ok"] is False
    assert not (tree.repo / ".ph" / "config.toml").exists() and not (tree.repo / ".phrc").exists()
    assert list((tree.repo / ".ph" / "undo").glob("*")) == undo_logs
    ws = Workspace(tree.repo)
    assert not [f for f in ws.files() if f.startswith(".ph")]


FAILING_REPO = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n",
    "test_top.py": "def test_top():\n    assert True\n",
    "helper_test.py": "def test_helper():\n    assert True\n",
    "check_extra.py": "def test_extra():\n    assert True\n",
    "pytest.ini": "[pytest]\npython_files = test_*.py *_test.py check_*.py\n",
}


@pytest.mark.case(16)
def test_fix_mode_asks_pytest_for_its_test_files(tree):
    for rel, text in FAILING_REPO.items():
        tree.write(rel, text)
    found = collected_files(tree.repo)
    assert {"tests/test_calc.py", "test_top.py", "helper_test.py", "check_extra.py"} <= found
    assert "calc.py" not in found


@pytest.mark.case(16)
def test_fix_mode_with_named_tests_collects_only_those(tree):
    """`ph fix TESTS...` is judged by TESTS, so only they are collected: collecting a large tree (sympy) whole ran
    past the 60 s timeout and named nothing. Files that look like tests stay protected by their names."""
    for rel, text in FAILING_REPO.items():
        tree.write(rel, text)
    tree.write("tests/test_other.py", "import pathlib\npathlib.Path('imported.marker').write_text('x')\n")
    found = collected_files(tree.repo, tests=["tests/test_calc.py"])
    assert found == {"tests/test_calc.py"}
    assert not (tree.repo / "imported.marker").exists()  # the other test file was never imported
    ws = Workspace(tree.repo, protect_tests=True)
    assert ws.is_test_path("tests/test_other.py") and ws.is_test_path("test_top.py")


@pytest.mark.case(16)
def test_fix_mode_refuses_tests_and_test_config(tree):
    for rel, text in FAILING_REPO.items():
        tree.write(rel, text)
    tree.write("setup.cfg", "[metadata]\nname = calc\n")
    paths = ["tests/test_calc.py", "test_top.py", "helper_test.py", "check_extra.py", "conftest.py",
             "tests/conftest.py", "pytest.ini", ".pytest.ini", "pyproject.toml", "setup.cfg", "tox.ini",
             "sitecustomize.py", "usercustomize.py", "evil.pth", "tests/test_new.py"]
    before = state(tree)
    result, turns = drive(tree, [write(p, "def test_ok():\n    pass\n") for p in paths], mode="fix")
    for path, turn in zip(paths, turns, strict=False):
        assert turn["ok"] is False, turn["observation"]
        assert path in turn["observation"] and "test or test config" in turn["observation"]
    assert state(tree) == before
    assert result.outcome != "done" and result.invalid is None


@pytest.mark.case(16)
@pytest.mark.parametrize("confined", [True, False], ids=["sandbox", "no-sandbox"])
def test_fix_run_is_invalid_when_code_run_by_the_tests_changes_a_test_file(tree, confined):
    tree.write("calc.py", "import pathlib\n\npathlib.Path(__file__).with_name('conftest.py').write_text('# sneaky\\n')"
                          "\n\n\ndef add(a, b):\n    return a - b\n")
    tree.write("tests/test_calc.py", FAILING_REPO["tests/test_calc.py"])
    tree.write("conftest.py", "import sys\nimport pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n")
    conftest = (tree.repo / "conftest.py").read_bytes()
    edit = ('Action: edit {"path": "calc.py"}\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n'
            '>>>>>>> REPLACE')
    with sandbox.override(confined):
        result, turns = drive(tree, [edit], mode="fix")
    if confined:  # the test files are read-only in the sandbox: the write fails, the tests error, nothing changed
        assert (tree.repo / "conftest.py").read_bytes() == conftest
        assert result.outcome != "done" and result.invalid is None
        return
    assert result.outcome == "invalid"  # without it, the hash check after the first test run sees the change
    assert "conftest.py" in result.invalid and "conftest.py" in result.reason
    records = read_transcript(Path(result.transcript))
    assert any(r["event"] == "invalid" and "conftest.py" in r["reason"] for r in records)


@pytest.mark.case(16)
def test_fix_run_that_leaves_tests_alone_is_not_invalid(tree):
    tree.write("calc.py", "def add(a, b):\n    return a - b\n")
    tree.write("tests/test_calc.py", FAILING_REPO["tests/test_calc.py"])
    tree.write("conftest.py", "import sys\nimport pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n")
    edit = ('Action: edit {"path": "calc.py"}\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n'
            '>>>>>>> REPLACE')
    result, turns = drive(tree, [edit], mode="fix")
    assert result.outcome == "done", result.reason
    assert result.invalid is None


SECRET_FILES = {".env": "API_TOKEN=SECRET-ENV-VALUE\n", ".env.local": "X=SECRET-ENV-LOCAL\n",
                "certs/server.pem": "-----BEGIN PRIVATE KEY-----\nSECRET-PEM\n", "id_rsa": "SECRET-RSA\n",
                ".netrc": "machine x login u password SECRET-NETRC\n",
                "deploy/credentials.json": '{"k": "SECRET-CRED"}\n'}


@pytest.mark.case(17)
def test_secrets_refused_for_read_and_hidden_from_search_and_list(tree):
    for rel, text in SECRET_FILES.items():
        tree.write(rel, text)
    tree.write("app.py", "print('hi')\n")
    tree.git_init()
    (tree.repo / "cfg").symlink_to(".env")
    reads = [f'Action: read {{"path": "{p}"}}' for p in [*SECRET_FILES, "cfg", "./.ENV"]]
    result, turns = drive(tree, [*reads, 'Action: search {"pattern": "SECRET"}', 'Action: list {"path": "."}',
                                 'Action: search {"pattern": "SECRET", "path": ".env"}'], mode="ask")
    texts = [t["observation"] for t in turns]
    for turn in turns[:len(reads)]:
        assert turn["ok"] is False and "secrets" in turn["observation"], turn["observation"]
    assert "No match" in texts[len(reads)]
    listing = texts[len(reads) + 1]
    assert "app.py" in listing and not any(name in listing for name in (".env", "id_rsa", ".pem", ".netrc", "cfg"))
    assert turns[len(reads) + 2]["ok"] is False
    assert not any("SECRET-" in text for text in texts)


@pytest.mark.case(18)
def test_gitignored_files_refused_for_writes_and_skipped_by_list_and_search(tree):
    tree.write(".gitignore", "build/\n.venv/\ngenerated.py\n")
    tree.write("src.py", "VALUE = 'needle'\n")
    tree.write("build/lib/src.py", "VALUE = 'needle'\n")
    tree.write(".venv/lib/site.py", "needle = 1\n")
    tree.write("generated.py", "needle = 2\n")
    tree.git_init()
    before = state(tree)
    result, turns = drive(tree, [write("build/lib/src.py"), write("build/new.py"), write(".venv/lib/site.py"),
                                 write("generated.py"), 'Action: search {"pattern": "needle"}',
                                 'Action: list {"path": "."}'])
    for turn, path in zip(turns[:4], ["build/lib/src.py", "build/new.py", ".venv/lib/site.py", "generated.py"],
                          strict=True):
        assert turn["ok"] is False and path in turn["observation"], turn["observation"]
    assert "ignored by git" in turns[0]["observation"] and "ignored by git" in turns[3]["observation"]
    assert "src.py:1" in turns[4]["observation"]
    assert "build/" not in turns[4]["observation"] and "generated.py" not in turns[4]["observation"]
    assert ".venv" not in turns[4]["observation"]
    assert "build/" not in turns[5]["observation"] and "generated.py" not in turns[5]["observation"]
    assert state(tree) == before


@pytest.mark.case(18)
def test_gitignored_file_refused_through_the_workspace(tree):
    tree.write(".gitignore", "*.log\n")
    tree.git_init()
    ws = Workspace(tree.repo)
    with pytest.raises(ActionError, match="run.log.*ignored by git"):
        ws.write_text("run.log", "x\n")
    assert not (tree.repo / "run.log").exists()
