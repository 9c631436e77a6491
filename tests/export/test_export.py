"""`ph export sft|dpo` on transcripts of real scripted runs (real repos, real pytest, real git, the real CLI): the files
load with the `datasets` JSON loader in the chat and preference formats, the assistant turn is the call the harness ran
in canonical form, refused and contradicted steps are left out and counted, secrets never reach an export, and runs
from another repo are refused unless --allow-foreign."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from runkit import LOOP_LAYERS

from pyharness.evals.runner import make_stdout_repo
from pyharness.evals.tasks import Case, StdoutTask, task_message
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.models.scripted import ScriptedModel

QUESTION = "Which file defines the tax rate for books?"
ASK_REPLIES = [
    "I think the rate is somewhere in the tax module.",  # no action: a format error
    'Action: answer {"text": "It is in orders/tax.py"}',  # refused: cites no file it read
    'Action: read("orders/tax.py")',  # call syntax: the harness repairs it
    'Action: answer {"text": "orders/tax.py:9 sets the books rate to 0.05"}',
]
FIX_EDIT = ('Thought: the threshold should include 10\nAction: edit {"path": "orders/pricing.py"}\n'
            "<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n=======\n"
            "    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")
SUM_TASK = StdoutTask(id="t_sum", prompt="Read integers, one per line, and print their sum.",
                      example=Case("1\n2\n3\n", "6\n"), hidden=[Case("5\n", "5\n")])
WRONG_CODE = "import sys\nprint(len(sys.stdin.read().split()))\n"
RIGHT_CODE = "import sys\nprint(sum(int(x) for x in sys.stdin.read().split()))\n"


@pytest.fixture(autouse=True)
def _offline_datasets(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


def ph(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, check=False)


def load(path: Path, tmp_path: Path):
    """The rows as TRL would get them: through the `datasets` JSON loader."""
    datasets = pytest.importorskip("datasets", reason="pip install datasets (the dev extra) for the format tests")
    return datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "hf-cache"))


def head(repo: Path) -> str:
    return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


def stdout_runs(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Two real runs in one stdout repo: search (a failing then a passing candidate for the same request), then the
    loop without search (a bare code block the harness turns into a write, then a canonical write)."""
    repo = make_stdout_repo(tmp_path / "sum", SUM_TASK)
    search = run_job(repo, "stdout", task_message(SUM_TASK),
                     ScriptedModel(replies=[f"```python\n{WRONG_CODE}```", f"```python\n{RIGHT_CODE}```"]),
                     config=AgentConfig(max_steps=2, schedule="plain@0,plain@0.8"),
                     harness=HarnessConfig(), default_write_path="main.py")
    assert search.outcome == "done", search.reason
    (repo / "main.py").unlink()
    loop = run_job(repo, "stdout", task_message(SUM_TASK),
                   ScriptedModel(replies=[f"```python\n{WRONG_CODE}```",
                                          f'Action: write {{"path": "main.py"}}\n```python\n{RIGHT_CODE}```']),
                   harness=HarnessConfig.parse_spec("on", LOOP_LAYERS), default_write_path="main.py")
    assert loop.outcome == "done", loop.reason
    return repo, [Path(search.transcript), Path(loop.transcript)]


def test_sft_exports_each_accepted_step_as_its_canonical_call_and_counts_the_rest(orders, drive, tmp_path):
    repo = orders("ask")
    result, _ = drive(repo, "ask", QUESTION, ASK_REPLIES)
    assert result.outcome == "done", result.reason
    out = tmp_path / "sft.jsonl"
    proc = ph("export", "sft", result.transcript, "--out", str(out), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert f"sft: 2 example(s) (2 loop steps) from 1 run(s) -> {out}" in proc.stdout
    assert "left out 2 step(s):" in proc.stdout and "1 no valid action" in proc.stdout and "1 refused" in proc.stdout
    rows = load(out, tmp_path)
    assert rows.column_names == ["messages", "source"] and len(rows) == 2
    read, answer = rows
    assert [m["role"] for m in read["messages"]] == ["system", "user", "assistant", "user", "assistant", "user",
                                                     "assistant"]
    # the repaired call-syntax reply goes out as the call the harness ran, in the protocol's own form
    assert read["messages"][-1]["content"] == 'Action: read {"path": "orders/tax.py"}'
    assert answer["messages"][-1]["content"] == \
        'Action: answer {"text": "orders/tax.py:9 sets the books rate to 0.05"}'
    assert answer["messages"][-2]["content"].startswith("Observation:") and "0.05" in answer["messages"][-2]["content"]
    assert not any(r["messages"][-1]["content"] in ASK_REPLIES[:2] for r in rows)  # neither the refused nor the prose
    run_id = Path(result.transcript).stem
    assert [(r["source"]["run"], r["source"]["commit"], r["source"]["step"]) for r in rows] == \
        [(run_id, head(repo), 3), (run_id, head(repo), 4)]


def test_dpo_pairs_a_passing_candidate_with_a_failing_one_and_a_repair_with_its_raw_reply(tmp_path):
    repo, transcripts = stdout_runs(tmp_path)
    out = tmp_path / "dpo.jsonl"
    proc = ph("export", "dpo", str(repo / ".ph" / "runs"), "--out", str(out), cwd=repo)
    assert proc.returncode == 0, proc.stderr
    assert "dpo: 2 pair(s)" in proc.stdout and "1 trial pairs" in proc.stdout and "1 loop repairs" in proc.stdout
    rows = load(out, tmp_path)
    assert set(rows.column_names) == {"prompt", "chosen", "rejected", "source"} and len(rows) == 2
    by_kind = {r["source"]["kind"]: r for r in rows}
    trial, loop = by_kind["trial"], by_kind["loop"]
    assert [m["role"] for m in trial["prompt"]] == ["user"] and SUM_TASK.prompt in trial["prompt"][0]["content"]
    assert trial["chosen"] == [{"role": "assistant", "content": f"```python\n{RIGHT_CODE}```"}]
    assert trial["rejected"] == [{"role": "assistant", "content": f"```python\n{WRONG_CODE}```"}]
    assert trial["source"]["run"] == transcripts[0].stem and trial["source"]["rejected_step"] == 1
    assert [m["role"] for m in loop["prompt"]] == ["system", "user"]
    assert loop["chosen"][0] == {"role": "assistant",
                                 "content": f'Action: write {{"path": "main.py"}}\n```python\n{WRONG_CODE}```'}
    assert loop["rejected"][0]["content"] == f"```python\n{WRONG_CODE}```"  # the raw reply the harness mended
    assert loop["source"]["run"] == transcripts[1].stem

    sft = tmp_path / "sft.jsonl"
    made = ph("export", "sft", str(repo / ".ph" / "runs"), "--out", str(sft), cwd=repo)
    assert made.returncode == 0, made.stderr
    assert "3 example(s) (2 loop steps, 1 passing trial candidates)" in made.stdout
    assert "left out 1 step(s): 1 trial candidate failed its check" in made.stdout
    rows = load(sft, tmp_path)
    passing = next(r for r in rows if r["source"]["kind"] == "trial")
    assert [m["role"] for m in passing["messages"]] == ["user", "assistant"]
    assert passing["messages"][1]["content"] == f"```python\n{RIGHT_CODE}```"


def test_a_run_put_back_by_undo_or_marked_invalid_exports_nothing_and_says_why(orders, drive, tmp_path):
    repo = orders("fix")
    result, records = drive(repo, "fix", "", ['Action: read {"path": "orders/pricing.py"}', FIX_EDIT])
    assert result.outcome == "done", result.reason
    out = tmp_path / "sft.jsonl"
    before = ph("export", "sft", result.transcript, "--out", str(out), cwd=repo)
    assert before.returncode == 0 and "sft: 2 example(s)" in before.stdout
    # the edit's canonical form has no Thought line: the block follows the action line
    last = json.loads(out.read_text().splitlines()[-1])["messages"][-1]["content"]
    assert last == FIX_EDIT.split("\n", 1)[1]

    # a contradiction a scripted run cannot easily produce (the model's code changing a test file while the tests
    # run): the record session.run_job appends when its test guard finds one, planted by hand in a copy
    marked = repo / ".ph" / "runs" / "marked-invalid.jsonl"
    marked.write_text(Path(result.transcript).read_text() + json.dumps(
        {"event": "invalid", "reason": "test files changed during the run: tests/test_pricing.py"}) + "\n")
    invalid = ph("export", "sft", str(marked), "--out", str(out), cwd=repo)
    assert invalid.returncode == 0, invalid.stderr
    assert "sft: 0 example(s) from 1 run(s)" in invalid.stdout and "left out 2 step(s): 2 run invalid" in invalid.stdout

    undo = ph("undo", "--repo", str(repo), cwd=repo)
    assert undo.returncode == 0 and "restored orders/pricing.py" in undo.stdout
    after = ph("export", "sft", result.transcript, "--out", str(out), cwd=repo)
    assert after.returncode == 0, after.stderr
    assert "sft: 0 example(s)" in after.stdout and "left out 2 step(s): 2 change undone" in after.stdout
    assert out.read_text() == ""


def test_secrets_planted_in_a_transcript_reach_no_export(tmp_path, monkeypatch):
    repo, transcripts = stdout_runs(tmp_path)
    env_secret = "vault-" + "q8Z2" * 5
    monkeypatch.setenv("SHOP_SERVICE_TOKEN", env_secret)  # a credential-named variable: masked by value
    secrets = ["AKIA" + "QX7" * 5 + "Z", "ghp_" + "a1B2c3D4e5" * 4, env_secret,
               "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK" + "x" * 40 + "\n-----END RSA PRIVATE KEY-----"]
    planted = "\n# " + "\n# ".join(secrets)
    # planted by hand: a run redacts its transcript as it writes it, so a secret has to be put in afterwards (as one
    # copied from an older ph, or edited, would hold it)
    for path in transcripts:
        records = [json.loads(line) for line in path.read_text().splitlines()]
        for record in records:
            if record["event"] != "turn":
                continue
            record["reply"] += planted
            record["observation"] += planted
            record["new_messages"][-1]["content"] += planted
        (repo / ".ph" / "runs" / f"planted-{path.name}").write_text("".join(json.dumps(r) + "\n" for r in records))
    files = [str(repo / ".ph" / "runs" / f"planted-{p.name}") for p in transcripts]
    exported = []
    for kind in ("sft", "dpo"):
        out = tmp_path / f"{kind}.jsonl"
        proc = ph("export", kind, *files, "--out", str(out), cwd=repo)
        assert proc.returncode == 0, proc.stderr
        text = out.read_text()
        assert text.count("\n") >= 2 and "[redacted" in text  # rows were written, with the secrets masked
        exported.append(text)
    for secret in secrets:
        for text in exported:
            assert secret not in text and json.dumps(secret)[1:-1] not in text
    assert all("QX7QX7" not in text and "a1B2c3D4e5a1B2" not in text and "q8Z2q8Z2" not in text for text in exported)


def test_runs_of_another_repo_are_refused_unless_allowed(orders, drive, tmp_path):
    made_in = orders("ask")
    result, _ = drive(made_in, "ask", QUESTION, ASK_REPLIES[2:])
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("another project\n")
    subprocess.run(["git", "init", "-q"], cwd=other, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-q",
                    "--allow-empty", "-m", "another project"], cwd=other, check=True)
    out = tmp_path / "sft.jsonl"
    refused = ph("export", "sft", result.transcript, "--out", str(out), "--repo", str(other), cwd=other)
    assert refused.returncode == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert refused.stderr.startswith("ph: 1 run(s) from another repo:")
    assert f"was made in {made_in.resolve()}, not in {other.resolve()}" in refused.stderr
    assert "--allow-foreign" in refused.stderr and not out.exists()
    allowed = ph("export", "sft", result.transcript, "--out", str(out), "--repo", str(other), "--allow-foreign",
                 cwd=other)
    assert allowed.returncode == 0 and "sft: 2 example(s)" in allowed.stdout and "1 from other repos" in allowed.stdout
    assert len(out.read_text().splitlines()) == 2

    # a transcript kept inside the repo whose run worked in a folder that is gone (as `ph eval` keeps its runs'
    # transcripts in its results folder) belongs to the repo
    kept = other / "results" / "run.jsonl"
    kept.parent.mkdir()
    shutil.copyfile(result.transcript, kept)
    shutil.rmtree(made_in)
    own = ph("export", "sft", str(other / "results"), "--out", str(out), cwd=other)
    assert own.returncode == 0, own.stderr
    assert "sft: 2 example(s)" in own.stdout and "other repos" not in own.stdout
