"""Shared set-up of the attacks run as repo code (cases 77-92): a calc repo, a test file that runs an attack and
records what happened, and a marker script that leaves a file behind when anything runs it."""

import json
import subprocess
from pathlib import Path

BUGGY = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
FIX = ('Action: edit {"path": "calc.py"}\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n'
       ">>>>>>> REPLACE")
DONE = 'Action: done {"summary": "done"}'


def calc_repo(tree, test: str = TEST, git: bool = True) -> None:
    """calc.py with its bug, tests/test_calc.py that fails on it, one commit (hooks and signing off)."""
    tree.write("calc.py", BUGGY)
    tree.write("tests/test_calc.py", test)
    if git:
        tree.git_init()


def attack_test(body: str, record: Path) -> str:
    """A test module whose one test runs `body` (indented, with `results` a dict to fill) and writes `results` as
    JSON to `record`; the test passes whatever the attack found."""
    lines = "".join(f"    {line}\n" for line in body.splitlines())
    return ("import json, os, socket, subprocess, sys\n\n\n"
            "def test_attack():\n"
            "    results = {}\n"
            f"{lines}"
            f"    with open({str(record)!r}, 'w') as f:\n"
            "        json.dump(results, f)\n")


def read_record(record: Path) -> dict:
    """What an attack test recorded ({} when it did not get to record anything)."""
    return json.loads(record.read_text()) if record.exists() else {}


def marker_script(path: Path, marker: Path) -> Path:
    """An executable that leaves `marker` behind when it runs (and then behaves like `cat`)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\ntouch '{marker}'\ncat\n")
    path.chmod(0o755)
    return path


def plain_git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    """git as the user would run it next in that folder: no ph settings, the repo's own config in force."""
    return subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, timeout=60)
