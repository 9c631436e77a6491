"""Config (case 75): a repo's `[tool.ph]` cannot override the user's config or name an `openai:` URL, not even a
port on this machine (any local process may listen there and would receive the user's API key)."""

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

WT = Path(__file__).resolve().parents[2]


@pytest.mark.case(75)
def test_a_repo_cannot_send_the_api_key_to_a_local_port_it_picked(tree, tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    listener.settimeout(0.2)
    port, got = listener.getsockname()[1], []

    def accept():
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            got.append(conn.recv(65536))
            conn.close()

    stop = threading.Event()
    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    tree.write("pyproject.toml", f"[tool.ph]\nmodel = 'openai:m@http://127.0.0.1:{port}/v1'\n")
    tree.write("a.py", "x = 1\n")
    replies = tmp_path / "r.json"
    replies.write_text(json.dumps(['Action: read {"path": "a.py"}', 'Action: answer {"text": "x is 1 (a.py:1)"}']))
    user = tmp_path / "user.toml"
    user.write_text(f"model = 'scripted:{replies}'\n")
    env = {**os.environ, "PYTHONPATH": str(WT), "NO_COLOR": "1", "PH_CONFIG": str(user),
           "OPENAI_API_KEY": "sk-user-key-0123456789abcdefghij"}
    try:
        done = subprocess.run([sys.executable, "-m", "pyharness.cli", "ask", "what is x?", "--repo", str(tree.repo)],
                              capture_output=True, text=True, env=env, timeout=120)
    finally:
        stop.set()
        thread.join(5)
        listener.close()
    tree.seen(done.stdout, done.stderr)
    err = " ".join(done.stderr.split())
    assert got == []  # nothing connected to the repo's port
    assert f"model: scripted:{replies} (from user config " in err
    assert "a repo may not name a server URL" in err
    assert done.returncode == 0, err


@pytest.mark.case(75)
def test_the_users_config_wins_over_the_repos_model(tree, tmp_path, monkeypatch):
    from pyharness.cli.config import effective

    tree.write("pyproject.toml", "[tool.ph]\nmodel = 'ollama:repo-choice'\n")
    user = tmp_path / "user.toml"
    user.write_text("model = 'ollama:user-choice'\n")
    monkeypatch.setenv("PH_CONFIG", str(user))
    setting = effective({}, {"model": None}, tree.repo, env={}).values["model"]
    assert (setting.value, setting.source) == ("ollama:user-choice", "user config")
