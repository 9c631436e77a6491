"""Transcripts and ph's own folder (cases 58, 84): secrets redacted, files 0600, never written or read through a .ph
link, .ph/ git-excluded; code that runs cannot swap `.ph` for a link out of the repo."""

import contextlib
import json
import subprocess
import sys
from pathlib import Path

import pytest
from calckit import DONE, calc_repo

from pyharness.errors import UserError
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel
from pyharness.workspace import sandbox
from pyharness.workspace.gitops import run as git
from pyharness.workspace.redact import redact
from pyharness.workspace.testrun import run_pytest

AWS = "AKIA" + "IOSFODNN7EXAMPLE"


GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"


KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq9secretkeymaterial\nAbCdEf==\n-----END RSA PRIVATE KEY-----"


URL_PASSWORD = "s3cr3t-pw"


URL = f"https://deploy:{URL_PASSWORD}@git.example.com/org/repo.git"


SECRETS = (AWS, GITHUB, "secretkeymaterial", URL_PASSWORD)


SETTINGS = f'AWS_KEY = "{AWS}"\nTOKEN = "{GITHUB}"\nREMOTE = "{URL}"\nPEM = """{KEY}"""\n'


@pytest.fixture(autouse=True)
def state_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path / "state"))


def ask(repo, replies):
    return run_job(repo, "ask", "what does settings.py hold?", ScriptedModel(replies=replies))


@pytest.mark.case(58)
def test_secrets_read_and_echoed_by_the_model_are_redacted_in_the_transcript(tree):
    tree.write("settings.py", SETTINGS)
    replies = ['Action: read {"path": "settings.py"}',
               f'Thought: the key is {AWS} and the token {GITHUB}\n'
               f'Action: answer {{"text": "settings.py:1 holds {AWS}; the remote is {URL}"}}']
    result = ask(tree.repo, replies)
    assert result.outcome == "done", result.reason
    text = open(result.transcript, encoding="utf-8").read()
    for secret in SECRETS:
        assert secret not in text
    for marker in ("[redacted AWS key]", "[redacted GitHub token]", "[redacted private key]",
                   "https://deploy:[redacted]@git.example.com"):
        assert marker in text
    for line in text.splitlines():
        json.loads(line)  # redaction kept every record valid JSON


@pytest.mark.case(58)
def test_transcripts_are_private_files(tree):
    tree.write("a.py", "A = 1\n")
    result = ask(tree.repo, ['Action: read {"path": "a.py"}', 'Action: answer {"text": "a.py:1 sets A"}'])
    path = tree.repo / ".ph" / "runs"
    assert (tree.repo / ".ph").stat().st_mode & 0o777 == 0o700 and path.stat().st_mode & 0o777 == 0o700
    assert result.transcript.startswith(str(path))
    assert (path / result.transcript.split("/")[-1]).stat().st_mode & 0o777 == 0o600


@pytest.mark.case(58)
def test_ph_dir_is_added_to_git_info_exclude_once(tree):
    tree.write("a.py", "A = 1\n")
    tree.git_init()
    for _ in range(2):
        ask(tree.repo, ['Action: read {"path": "a.py"}', 'Action: answer {"text": "a.py:1 sets A"}'])
    lines = (tree.repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert lines.count(".ph/") == 1
    assert git(tree.repo, "status", "--porcelain").strip() == ""  # the transcripts never show up as untracked


@pytest.mark.case(58)
def test_an_exclude_file_linked_out_of_the_repo_is_not_followed(tree):
    tree.write("a.py", "A = 1\n")
    tree.git_init()
    target = tree.outside_file("exclude-target.txt", "outside file\n")
    exclude = tree.repo / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    exclude.symlink_to(target)
    result = ask(tree.repo, ['Action: read {"path": "a.py"}', 'Action: answer {"text": "a.py:1 sets A"}'])
    assert result.outcome == "done"  # the run went on; the fixture checks outside/ is byte-identical
    assert exclude.is_symlink()


@pytest.mark.case(58)
def test_a_ph_dir_shipped_as_a_link_out_of_the_repo_is_refused(tree):
    tree.write("a.py", "A = 1\n")
    (tree.outside / "runs").mkdir()
    tree.outside_file("runs/20990101-000000-000000-ask.jsonl", '{"event": "start", "task": "x"}\n')
    (tree.repo / ".ph").symlink_to("../outside")
    before = tree.repo_hash()
    with pytest.raises(UserError, match=r"\.ph is not a directory \(a symlink\?\)"):
        ask(tree.repo, ['Action: answer {"text": "a.py:1"}'])
    assert tree.repo_hash() == before
    shown = subprocess.run([sys.executable, "-m", "pyharness.cli", "log", "--repo", str(tree.repo)],
                           capture_output=True, text=True, timeout=60)
    assert shown.returncode == 1 and "is not a directory" in shown.stderr and "Traceback" not in shown.stderr
    tree.seen(shown.stdout, shown.stderr)


@pytest.mark.case(58)
@pytest.mark.parametrize("text,secret", [
    (f"aws_access_key_id={AWS}", AWS),
    (f"export GH_TOKEN={GITHUB}", GITHUB),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnopqrstuvwxyz"),
    (KEY, "secretkeymaterial"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n(cut off)", "b3BlbnNzaC1rZXktdjEAAAAA"),
    (f"git clone {URL}", URL_PASSWORD),
    ("postgres://app:hunter2@db:5432/x", "hunter2"),
])
def test_each_kind_of_secret_is_redacted(text, secret):
    assert secret not in redact(text)


@pytest.mark.case(58)
def test_ordinary_text_is_left_alone():
    text = ("def total(items):\n    return sum(i.price for i in items)  # see https://example.com/docs#sum\n"
            "git@github.com:org/repo.git  AKIA_PREFIX = 'AKIA'  ghp_short  task-list  user@example.com\n")
    assert redact(text) == text


@pytest.mark.case(58)
def test_a_test_runs_log_on_disk_is_redacted(tree):

    key = "AKIA" + "ABCDEFGHIJKLMNOP"
    tree.write("tests/test_leak.py", f"def test_leak():\n    print('{key}')\n    assert False\n")
    run = run_pytest(tree.repo, ["tests/test_leak.py"], timeout=60)
    assert run.log_path and key not in Path(run.log_path).read_text()
    assert key not in run.output


OFF = HarnessConfig.parse_spec("off", None)


RUN_TESTS = "Action: run_tests {}"


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
