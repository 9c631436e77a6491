"""Third list, cases 84, 88 and 89: ph's own `.ph` folder cannot be swapped for a link by code that runs, `ph eval`
job folders are untrusted input (paths contained, links not followed out), and the credentials the scrubber missed
are scrubbed and redacted."""

import contextlib
import json
import shutil
from pathlib import Path

import pytest
from thirdkit import DONE, calc_repo

from pyharness.evals.demo import make_repo
from pyharness.evals.suites import load_suite
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace import sandbox
from pyharness.workspace.procs import clean_env
from pyharness.workspace.redact import redact
from pyharness.workspace.testrun import run_pytest

OFF = HarnessConfig.parse_spec("off", None)
RUN_TESTS = "Action: run_tests {}"


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


SWAP = """import os, shutil


def test_swap():
    found = {{}}
    try:
        os.rename(".ph", ".ph-moved")
        found["rename"] = "moved"
    except OSError as e:
        found["rename"] = type(e).__name__
    try:
        shutil.rmtree(".ph", ignore_errors=False) if os.path.isdir(".ph") else None
        os.symlink({target!r}, ".ph")
        found["link"] = "linked"
    except OSError as e:
        found["link"] = type(e).__name__
    for name in os.listdir(".ph/runs") if os.path.isdir(".ph/runs") else []:
        try:
            os.unlink(os.path.join(".ph/runs", name))
            os.symlink(os.path.join({target!r}, "runs", name), os.path.join(".ph/runs", name))
            found["transcript"] = "linked"
        except OSError as e:
            found["transcript"] = type(e).__name__
    open("swap.json", "w").write(repr(found))
"""
"""A test that replaces ph's `.ph` (or the transcript in it) with a link to `target` while the run goes on."""


def swap_run(tree, target: Path) -> tuple:
    calc_repo(tree)
    tree.write("tests/test_swap.py", SWAP.format(target=str(target)))
    result = run_job(tree.repo, "run", "run the tests", ScriptedModel(replies=[RUN_TESTS, DONE, DONE]), harness=OFF,
                     config=AgentConfig(max_steps=3))
    tree.seen(result.reason)
    return result, eval((tree.repo / "swap.json").read_text())


@pytest.mark.case(84)
def test_code_that_runs_cannot_swap_phs_folder_for_a_link_out_of_the_repo(tree, flow):
    target = tree.outside
    (target / "runs").mkdir()
    tree.outside_file("runs/keep.txt", "")
    result, found = swap_run(tree, target)
    assert set(found.values()) <= {"OSError", "PermissionError", "FileNotFoundError"}, found
    assert found["rename"] != "moved" and found["link"] != "linked" and found.get("transcript") != "linked"
    assert (tree.repo / ".ph").is_dir() and not (tree.repo / ".ph").is_symlink()
    transcript = Path(result.transcript)
    assert transcript.parent == tree.repo / ".ph" / "runs" and not transcript.is_symlink()
    assert read_transcript(transcript)[-1]["event"] == "end"  # every record after the test run reached it


@pytest.mark.case(84)
def test_without_the_sandbox_the_swap_sends_phs_records_out_of_the_repo(tree):
    target = tree.base / "control"
    (target / "runs").mkdir(parents=True)
    with sandbox.override(False), contextlib.suppress(OSError):  # ph may stop on the link it is handed
        swap_run(tree, target)
    assert (tree.repo / ".ph").is_symlink() and any((target / "runs").iterdir())  # ph's records went out


# --- 88: job folders are untrusted input ---------------------------------------------------------------------

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


# --- 89: credentials the scrubber missed ---------------------------------------------------------------------

GITLAB = "glpat-" + "Xy7" * 7
STRIPE = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"
LEAKS = {"DB_PASS": "db-pass-value-1", "MYSQL_PWD": "mysql-pwd-value-2", "SENTRY_DSN": "https://abc@o1.ingest.io/3",
         "BW_SESSION": "bw-session-value-4", "APP_DEPLOY_PASS": "deploy-pass-5", "CI_JOB_TOKEN_X": "unused",
         "SOME_SERVICE_KEY": "service-key-value-6", "GL": GITLAB, "PAYMENTS": STRIPE}


@pytest.mark.case(89)
def test_the_credentials_the_scrubber_missed_are_scrubbed_and_redacted(tree, monkeypatch):
    for name, value in LEAKS.items():
        monkeypatch.setenv(name, value)
    assert not set(LEAKS) & set(clean_env())
    (tree.repo / "leak.txt").write_text(" ".join(LEAKS.values()))  # the values reach the test some other way
    tree.write("tests/test_leak.py", "import os\n\n\ndef test_leak():\n"
               f"    print(sorted(k for k in os.environ if k in {sorted(LEAKS)!r}))\n"
               "    print(open('leak.txt').read())\n"
               "    assert False\n")
    run = run_pytest(tree.repo, ["tests/test_leak.py"], timeout=60)
    shown = run.observation() + run.output + Path(run.log_path).read_text()
    assert "[]" in run.output  # none of the variables reached the test
    for value in LEAKS.values():
        if value != "unused":
            assert value not in shown, value
    assert GITLAB not in redact(f"token {GITLAB} here") and STRIPE not in redact(f"key={STRIPE}")
    assert redact("DB_PASS=hunter2hunter2\nexport MYSQL_PWD=swordfish9\n") == \
        "DB_PASS=[redacted]\nexport MYSQL_PWD=[redacted]\n"
