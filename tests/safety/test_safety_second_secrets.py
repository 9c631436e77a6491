"""Second list, cases 64 (a secret a test prints is masked by value) and 76 (common credential files protected; AWS
secret keys, DSN passwords and private-key blocks redacted in every output)."""

from pathlib import Path

import pytest

from actions import CORE
from actions.base import Context
from pyharness.errors import ActionError
from pyharness.redact import redact
from pyharness.testrun import run_pytest
from pyharness.workspace import Workspace

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
    (tree.base / "leak.txt").write_text(ODD_SECRET)
    leak = str(tree.base / "leak.txt")
    tree.write("tests/test_leak.py", f"def test_leak():\n    assert open({leak!r}).read() == ''\n")
    run = run_pytest(tree.repo, ["tests/test_leak.py"], timeout=60)
    tree.seen(run.observation())
    assert run.failing == ["tests/test_leak.py::test_leak"]
    assert ODD_SECRET not in run.observation()
    assert ODD_SECRET not in Path(run.log_path).read_text()
    assert "[redacted]" in run.observation()


@pytest.mark.gap(64, "without the sandbox's PID namespace a test still reads ph's own environment in "
                     "/proc/PPID/environ (what it prints of it is masked by value, the test above)")
def test_a_test_can_still_read_the_parents_environment(tree):
    found = tree.base / "found.txt"
    tree.write("tests/test_peek.py", "import os\n\ndef test_peek():\n"
               "    env = open(f'/proc/{os.getppid()}/environ', 'rb').read()\n"
               f"    open({str(found)!r}, 'w').write(str(b'PATH=' in env))\n")
    run = run_pytest(tree.repo, ["tests/test_peek.py"], timeout=60)
    assert run.green, run.observation()
    assert found.read_text() == "True"  # the gap: ph's own (unscrubbed) environment is readable
