"""Arguments are data (cases 61, 66, 71, 74): run_tests targets are never pytest options, pytest's config stays in the
repo, copies of the tree never follow symlinks out of it, and an example in `ph add`'s task text becomes a test only
when its arguments are data."""

import os
from pathlib import Path

import pytest

from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.trials.candidates import AddTarget
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace
from pyharness.workspace.treecopy import copy_tree

GREEN_TEST = "def test_ok():\n    assert True\n"


def _files(root: Path) -> dict[str, bytes]:
    """The repo's files and their bytes, ph's own folders (.ph transcripts, .git) left out."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not {".ph", ".git"} & set(p.relative_to(root).parts)}


def _turns(result) -> list[dict]:
    return [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]


@pytest.mark.case(61)
@pytest.mark.parametrize("target", ["--junitxml=../outside/report.xml", "--basetemp=../outside/victim",
                                    "@../outside/secret.txt", " -p no:python"])
def test_a_run_tests_target_that_is_a_pytest_option_is_refused(tree, target):
    (tree.outside / "victim").mkdir()
    (tree.outside / "victim" / "keep.txt").write_text("keep\n")
    tree.baseline = __import__("safetree")._snapshot(tree.outside)
    tree.write("tests/test_ok.py", GREEN_TEST)
    tree.git_init()
    before = _files(tree.repo)
    reply = f"Action: run_tests {{\"target\": \"{target}\"}}"
    result = run_job(tree.repo, "run", "run the tests", ScriptedModel(replies=[reply]),
                     harness=HarnessConfig.parse_spec("off", None), config=AgentConfig(max_steps=1))
    turn = _turns(result)[0]
    tree.seen(turn["observation"])
    assert turn["action"]["name"] == "run_tests"
    assert turn["ok"] is False
    assert "pytest option or argument file" in turn["observation"]
    assert not (tree.outside / "report.xml").exists()
    assert (tree.outside / "victim" / "keep.txt").read_text() == "keep\n"
    assert _files(tree.repo) == before


@pytest.mark.case(61)
def test_run_pytest_itself_refuses_an_option_as_a_target(tree):
    tree.write("tests/test_ok.py", GREEN_TEST)
    with pytest.raises(ValueError, match="pytest option"):
        run_pytest(tree.repo, ["--junitxml=../outside/report.xml"])
    assert not (tree.outside / "report.xml").exists()


@pytest.mark.case(71)
def test_pytest_takes_no_config_or_conftest_from_a_folder_above_the_repo(tree):
    # the repo's parent (tmp_path) holds an ini file with options and a conftest that writes outside
    canary = tree.outside / "conftest-ran.txt"
    (tree.base / "pytest.ini").write_text("[pytest]\naddopts = --junitxml=outside/from-ini.xml\n")
    (tree.base / "conftest.py").write_text(f"open({str(canary)!r}, 'w').write('ran')\n")
    tree.write("tests/test_ok.py", GREEN_TEST)
    try:
        run = run_pytest(tree.repo, ["tests/test_ok.py"], timeout=60)
    finally:
        (tree.base / "pytest.ini").unlink()
        (tree.base / "conftest.py").unlink()
    assert run.green, run.observation()
    assert not canary.exists()
    assert not (tree.outside / "from-ini.xml").exists()


@pytest.mark.case(71)
def test_the_repos_own_config_and_conftest_still_apply(tree):
    tree.write("pyproject.toml", "[tool.pytest.ini_options]\nmarkers = ['slow: slow tests']\n"
                                 "addopts = '-m \"not slow\"'\n")
    tree.write("tests/conftest.py", "import pytest\n\n@pytest.fixture\ndef answer():\n    return 42\n")
    tree.write("tests/test_ok.py", "import pytest\n\ndef test_fixture(answer):\n    assert answer == 42\n\n"
                                   "@pytest.mark.slow\ndef test_slow():\n    assert False\n")
    run = run_pytest(tree.repo, None, timeout=60)
    assert run.green, run.observation()
    assert run.counts.get("passed") == 1 and run.counts.get("deselected") == 1


@pytest.mark.case(66)
def test_a_tree_copy_never_follows_a_symlink_out_of_the_tree(tree):
    tree.write("pkg/mod.py", "X = 1\n")
    tree.write("data/table.txt", "inside\n")
    os.symlink("/dev/zero", tree.repo / "zero.bin")
    os.symlink("../outside", tree.repo / "x")
    os.symlink("..", tree.repo / "up")
    os.symlink("data/table.txt", tree.repo / "table.txt")     # inside: kept, as a link
    os.symlink(str(tree.repo / "pkg"), tree.repo / "pkg2")     # absolute, but inside: kept, made relative
    os.mkfifo(tree.repo / "pipe")
    copy = tree.base / "copy"
    left_out = copy_tree(tree.repo, copy)
    assert sorted(left_out) == ["pipe", "up", "x", "zero.bin"]
    for name in ("zero.bin", "x", "up", "pipe"):
        assert not os.path.lexists(copy / name)
    assert os.readlink(copy / "table.txt") == "data/table.txt"
    assert (copy / "table.txt").read_text() == "inside\n"
    assert os.readlink(copy / "pkg2") == "pkg"
    assert (copy / "pkg2" / "mod.py").read_text() == "X = 1\n"
    assert (copy / "pkg" / "mod.py").read_text() == "X = 1\n"


@pytest.mark.case(74)
def test_an_example_whose_argument_runs_code_is_not_made_a_test(tree):
    tree.write("shop/__init__.py", "")
    tree.write("shop/items.py", "class Item:\n    def __init__(self, name, price):\n        self.name, self.price = "
                                "name, price\n")
    canary = tree.outside / "ran.txt"
    task = ("Add a function total(items) in the new file shop/total.py that sums the prices (see shop/items.py). "
            f"Examples: total([]) == 0, total([Item('a', 2.5), Item('b', 1.5)]) == 4.0, "
            f"total(__import__('os').system('touch {canary}')) == 0, "
            "total(().__class__.__base__.__subclasses__()) == 0, total(Item.__init__.__globals__) == 0.")
    target = AddTarget.parse(Workspace(tree.repo), task)
    assert target is not None
    calls = [c.call for c in target.checks]
    assert calls == ["total([])", "total([Item('a', 2.5), Item('b', 1.5)])"]
    assert "system" not in target.test and "__class__" not in target.test and "__globals__" not in target.test
    assert "from shop.items import Item" in target.test
    assert not canary.exists()
