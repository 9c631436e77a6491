"""Secrets (cases 64, 76, 89): common credential files refused, secret values redacted in every output and masked by
value where a test prints them, a test cannot read ph's environment or any other process's, and the credentials an
earlier scrubber missed are scrubbed and redacted."""

import os
from pathlib import Path

import pytest

from pyharness.actions import CORE
from pyharness.actions.base import Context
from pyharness.errors import ActionError
from pyharness.workspace.procs import clean_env
from pyharness.workspace.redact import redact
from pyharness.workspace.testrun import run_pytest
from pyharness.workspace.tree import Workspace

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9EXAMPLE"


ODD_SECRET = "v4lue-with-no-known-shape-91"


"""A credential whose value has no shape a pattern knows: only redaction by value can mask it."""


@pytest.mark.case(76)
@pytest.mark.parametrize("name", [".my.cnf", ".pgpass", "putty.ppk", "aws-credentials.txt", "prod_credentials",
                                  "vault.kdbx", "id_work", "deploy/id_ed25519_sk"])
def test_common_credential_files_are_refused_for_read(tree, name):
    tree.write(name, "secret\n")
    ws = Workspace(tree.repo)
    spec = CORE["read"]
    with pytest.raises(ActionError, match="secrets"):
        spec.run(spec.args(path=name), Context(workspace=ws))


@pytest.mark.case(76)
def test_source_files_with_such_names_stay_readable(tree):
    tree.write("auth/google_credentials.py", "TOKEN_URL = 'x'\n")
    tree.write("id_map.py", "IDS = {}\n")
    ws = Workspace(tree.repo)
    spec = CORE["read"]
    for name in ("auth/google_credentials.py", "id_map.py"):
        assert spec.run(spec.args(path=name), Context(workspace=ws)).ok


@pytest.mark.case(76)
def test_aws_secret_keys_dsn_passwords_and_key_blocks_are_redacted():
    text = (f"[default]\naws_secret_access_key = {AWS_SECRET}\n"
            "DATABASE_URL=postgres://app:Sup3rS3cret@db:5432/app\n"
            "DB_PASSWORD=hunter2hunter2\n"
            'settings = {"password": "c0rrect-horse"}\n'
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----\n")
    out = redact(text)
    for secret in (AWS_SECRET, "Sup3rS3cret", "hunter2hunter2", "c0rrect-horse", "b3BlbnNzaC1rZXktdjEAAAAA"):
        assert secret not in out
    assert "aws_secret_access_key = [redacted]" in out and "postgres://app:[redacted]@db" in out


def test_code_that_names_a_password_is_left_as_it_is():
    code = 'password = request.form["password"]\nif not check_password(user, password):\n'
    assert redact(code) == code


def test_a_secret_a_test_prints_is_masked_by_value_in_what_the_model_sees(tree, monkeypatch):
    monkeypatch.setenv("SERVICE_AUTH", ODD_SECRET)
    # the value reaches the test some way the scrub of the child's environment does not see (here: a file)
    (tree.repo / "leak.txt").write_text(ODD_SECRET)
    leak = str(tree.repo / "leak.txt")
    tree.write("tests/test_leak.py", f"def test_leak():\n    assert open({leak!r}).read() == ''\n")
    run = run_pytest(tree.repo, ["tests/test_leak.py"], timeout=60)
    tree.seen(run.observation())
    assert run.failing == ["tests/test_leak.py::test_leak"]
    assert ODD_SECRET not in run.observation()
    assert ODD_SECRET not in Path(run.log_path).read_text()
    assert "[redacted]" in run.observation()


@pytest.mark.case(64)
def test_a_test_cannot_read_phs_environment_or_any_other_process(tree, monkeypatch):
    monkeypatch.setenv("SERVICE_AUTH", ODD_SECRET)  # in ph's own environment, scrubbed from the child's
    found = tree.repo / "found.txt"
    tree.write("tests/test_peek.py", "import os\n\ndef test_peek():\n"
               "    seen = []\n"
               "    for pid in [os.getppid(), 1, *(int(p) for p in os.listdir('/proc') if p.isdigit())]:\n"
               "        try:\n"
               "            seen.append(open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace'))\n"
               "        except OSError as e:\n"
               "            seen.append(type(e).__name__)\n"
               "    pids = sorted(int(p) for p in os.listdir('/proc') if p.isdigit())\n"
               f"    open({str(found)!r}, 'w').write(repr((pids, seen)))\n")
    run = run_pytest(tree.repo, ["tests/test_peek.py"], timeout=60)
    assert run.green, run.observation()
    pids, seen = eval(found.read_text())
    assert ODD_SECRET not in " ".join(seen)
    assert len(pids) <= 4, pids  # its own /proc: the sandbox's init, pytest, and nothing of the host
    assert os.getpid() not in pids and os.getppid() not in pids


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
