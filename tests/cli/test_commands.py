"""ph undo, log, show, doctor and model list, through the real CLI in a subprocess."""

import json
import subprocess
import sys

from runkit import LOOP_LAYERS

FIX_EDIT = ('Action: edit {"path": "orders/pricing.py"}\n<<<<<<< SEARCH\n    if line.quantity > BULK_THRESHOLD:\n'
            "=======\n    if line.quantity >= BULK_THRESHOLD:\n>>>>>>> REPLACE")


def ph(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", *args], capture_output=True, text=True, timeout=120,
                          env=env)


def test_fix_then_undo_restores_the_files_exactly(orders, tmp_path):
    repo = orders("fix")
    before = (repo / "orders/pricing.py").read_bytes()
    (repo / "notes.txt").write_text("my uncommitted notes\n")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps([FIX_EDIT]))
    done = ph("fix", "--repo", str(repo), "--model", f"scripted:{replies}", "--layers", LOOP_LAYERS)
    assert done.returncode == 0, done.stderr
    assert (repo / "orders/pricing.py").read_bytes() != before
    undone = ph("undo", "--repo", str(repo))
    assert undone.returncode == 0, undone.stderr
    assert undone.stdout.strip() == "restored orders/pricing.py"
    assert (repo / "orders/pricing.py").read_bytes() == before
    assert (repo / "notes.txt").read_text() == "my uncommitted notes\n"
    again = ph("undo", "--repo", str(repo))
    assert again.returncode == 1 and "nothing to undo" in again.stderr


def test_undo_removes_a_file_the_run_created(orders, tmp_path):
    repo = orders("run")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(['Action: write {"path": "orders/extra.py"}\n```python\nX = 1\n```',
                                   'Action: done {"summary": "added"}']))
    assert ph("run", "add X", "--repo", str(repo), "--model", f"scripted:{replies}").returncode == 0
    assert (repo / "orders/extra.py").exists()
    assert ph("undo", "--repo", str(repo)).stdout.strip() == "removed orders/extra.py"
    assert not (repo / "orders/extra.py").exists()


def test_log_and_show_describe_the_recorded_run(orders, tmp_path):
    repo = orders("ask")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(['Action: read("orders/tax.py")',
                                   'Action: answer {"text": "orders/tax.py:9 holds 0.05"}']))
    assert ph("ask", "where?", "--repo", str(repo), "--model", f"scripted:{replies}").returncode == 0
    listed = ph("log", "--repo", str(repo)).stdout.strip().splitlines()
    assert len(listed) == 1 and "\tdone\t2 steps\t" in listed[0]
    shown = ph("show", listed[0].split("\t")[0], "--repo", str(repo))
    assert shown.returncode == 0
    assert "## step 1" in shown.stdout and "harness: parse.call_syntax" in shown.stdout
    assert shown.stdout.strip().endswith("# done: answer cites orders/tax.py:9, which holds 0.05")


def test_model_list_and_doctor_report_a_missing_pack(tmp_path):
    import os

    env = {**os.environ, "PH_CACHE_DIR": str(tmp_path), "OLLAMA_HOST": "http://127.0.0.1:9"}
    listed = ph("model", "list", env=env)
    assert listed.returncode == 0 and listed.stdout.startswith("qwen2.5-coder-1.5b\tnot pulled\t1.12 GB")
    doctor = ph("doctor", env=env)
    assert doctor.returncode == 1
    assert "no  pack qwen2.5-coder-1.5b" in doctor.stdout and "no  ollama" in doctor.stdout
    assert "ph model pull qwen2.5-coder-1.5b" in doctor.stderr


def test_conventions_version_short_help_and_input_checks(orders):
    from importlib.metadata import version

    done = ph("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"ph (py-harness) {version('py-harness')}"
    short = ph("-h")
    assert short.returncode == 0 and "Usage:" in short.stdout and "--version" in short.stdout
    repo = orders("run")
    empty = ph("run", "   ", "--repo", str(repo))
    assert empty.returncode == 1 and "the task is empty" in empty.stderr
    assert not (repo / ".ph").exists()  # refused before anything ran
    assert ph("fix", "--max-steps", "0", "--repo", str(repo)).returncode == 1  # a usage error, like any bad input
    bogus = ph("demo", "--only", "bogus")
    assert bogus.returncode == 1 and "the demo jobs are ask, fix, add and run" in bogus.stderr


def test_demo_exits_non_zero_when_a_job_fails(tmp_path):
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(["I do not know."] * 3))
    done = ph("demo", "--only", "ask", "--model", f"scripted:{replies}", "--max-steps", "2")
    assert "demo: 0/1 jobs succeeded" in done.stdout
    assert done.returncode == 2
