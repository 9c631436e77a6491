"""Live: the real embedded model (Qwen2.5-Coder-1.5B) through the real CLI. Runs in CI (make test pulls the pack)."""

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import live_pack
from pyharness.transcript import latest_runs, read_transcript

pytestmark = pytest.mark.live
MODEL = "llamacpp:qwen2.5-coder-1.5b"


def ph(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pyharness.cli", *args], capture_output=True, text=True,
                          timeout=timeout)


def test_live_ask_names_the_right_file(orders):
    live_pack()
    repo = orders("ask")
    proc = ph("ask", "Which file defines the tax rate for books, and what is the rate?", "--repo", str(repo),
              "--model", MODEL, "--max-seconds", "480")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "orders/tax.py" in proc.stdout


def test_live_fix_runs_to_an_end_with_real_actions(orders):
    live_pack()
    repo = orders("fix")
    proc = ph("fix", "--repo", str(repo), "--model", MODEL, "--max-steps", "6", "--max-seconds", "360")
    assert proc.returncode in (0, 2), proc.stderr[-2000:]  # 0: accepted, 2: ran out of budget; never a crash
    records = read_transcript(latest_runs(Path(repo))[0])
    assert records[-1]["event"] == "end"
    executed = [r for r in records if r["event"] == "turn" and r["action"] and r["ok"]]
    assert executed, "no action of the model was executed"
    assert any(r["action"]["name"] in ("read", "edit", "search", "run_tests") for r in executed)
    assert all(r["prompt_tokens"] > 0 and r["completion_tokens"] > 0 for r in records if r["event"] == "turn")
