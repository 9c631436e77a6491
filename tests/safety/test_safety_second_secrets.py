"""Second list, cases 64 (a secret a test prints is masked by value) and 76 (common credential files protected; AWS
secret keys, DSN passwords and private-key blocks redacted in every output)."""

import os
from pathlib import Path

import pytest

from pyharness.actions import CORE
from pyharness.actions.base import Context
from pyharness.errors import ActionError
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
