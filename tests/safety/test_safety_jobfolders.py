"""`ph eval` job folders are untrusted input (case 88): paths contained, links not followed out."""

import json
import shutil
from pathlib import Path

import pytest

from pyharness.evals.demo import make_repo
from pyharness.evals.suites import load_suite
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel

OFF = HarnessConfig.parse_spec("off", None)


RUN_TESTS = "Action: run_tests {}"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


def job_folder(suite: Path, name: str, job: dict, files: dict[str, str] | None = None) -> Path:
    folder = suite / name
    for rel, text in {"calc.py": "def add(a, b):\n    return a + b\n",
                      "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n",
                      **(files or {})}.items():
        (folder / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "repo" / rel).write_text(text)
    (folder / "job.json").write_text(json.dumps({"mode": "fix", "task": "",
                                                 "check": {"tests_pass": ["tests/test_calc.py::test_add"]}, **job}))
    return folder


@pytest.mark.case(88)
def test_a_job_whose_paths_leave_its_folder_is_refused_and_writes_nothing(tree):
    suite = tree.base / "suite"
    outside = tree.outside
    patch = {"find": "", "replace": "pwned\n"}
    bad = {
        "climb": {"seed": [{"path": "../../../outside/pwned.txt", **patch}]},
        "absolute": {"seed": [{"path": str(outside / "pwned.txt"), **patch}]},
        "dot_git": {"seed": [{"path": ".GIT/hooks/post-checkout", **patch}]},
        "reference": {"mode": "add", "hidden_test": "hidden.py", "reference": [{"path": "../x.py", **patch}]},
        "hidden": {"mode": "add", "hidden_test": "../../outside/secret.txt"},
        "test_id": {"check": {"tests_pass": ["/etc/passwd::x"]}},
    }
    for name, job in bad.items():
        job_folder(suite, name, job, {"hidden.py": ""} if name == "reference" else None)
    (suite / "reference" / "hidden.py").write_text("def test_x():\n    pass\n")
    job_folder(suite, "good", {})
    loaded = load_suite(str(suite))
    assert [t.id for t in loaded.tasks] == ["good"]
    problems = "\n".join(loaded.problems)
    assert len(loaded.problems) == len(bad), problems
    for name in bad:
        assert f"{name}/job.json" in problems
    assert "leaves its folder" in problems and "inside .git" in problems
    for n, name in enumerate(("climb", "absolute", "dot_git")):  # a seed applied without the check: refused
        with pytest.raises(ValueError):
            make_repo(tree.base / "made" / str(n), bad[name], root=suite / "good", source=suite / "good" / "repo")
    assert not (tree.outside / "pwned.txt").exists()


@pytest.mark.case(88)
def test_a_link_in_a_jobs_repo_is_not_followed_out_of_it(tree):
    suite = tree.base / "suite"
    folder = job_folder(suite, "links", {})
    repo = folder / "repo"
    (repo / "leak.txt").symlink_to(tree.outside / "secret.txt")
    (repo / "docs").symlink_to(tree.outside)
    (repo / "up").symlink_to("..")
    (repo / "inside.py").symlink_to("calc.py")
    [task] = load_suite(str(suite)).tasks
    made = make_repo(tree.base / "made", task.job, root=task.root, source=task.source)
    assert not (made / "leak.txt").exists() and not (made / "docs").exists() and not (made / "up").exists()
    assert (made / "inside.py").read_text() == (repo / "calc.py").read_text()  # a link inside stays
    everything = [p.read_text(errors="replace") for p in made.rglob("*") if p.is_file() and ".git" not in p.parts]
    tree.seen(*everything)
    read = 'Action: read {"path": "leak.txt"}'
    result = run_job(made, "ask", "What is in leak.txt?", ScriptedModel(replies=[read, read, read]), harness=OFF,
                     config=AgentConfig(max_steps=2))
    tree.seen(result.reason, *(json.dumps(r) for r in read_transcript(Path(result.transcript))))


@pytest.mark.case(88)
def test_a_jobs_repo_that_is_a_link_is_refused(tree):
    suite = tree.base / "suite"
    folder = job_folder(suite, "linked", {})
    shutil.rmtree(folder / "repo")
    (folder / "repo").symlink_to(tree.outside)
    loaded = load_suite(str(suite))
    assert loaded.tasks == [] and "repo/ is a symlink" in loaded.problems[0]
