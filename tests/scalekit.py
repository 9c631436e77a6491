"""Plain helpers of the scale tests (issue 26): a folder of job folders of your own, stdout tasks, scripted replies."""

import json
from pathlib import Path

OPS = "def add(a, b):\n    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"
TESTS = ("from calc.ops import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
         "def test_add_zero():\n    assert add(0, 4) == 4\n\n\ndef test_mul():\n    assert mul(2, 3) == 6\n")
PYPROJECT = ('[project]\nname = "calc"\nversion = "0.1.0"\n\n[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'
             'pythonpath = ["."]\n')
FIX = {"name": "calc_fix", "mode": "fix", "task": "",
       "seed": [{"path": "calc/ops.py", "find": "    return a + b\n", "replace": "    return a + b + (a == 2)\n"}],
       "check": {"tests_pass": ["tests/test_ops.py::test_add"]}}
"""The seed breaks test_add only (2 + 3 + 1); test_add_zero and test_mul still pass."""
ADD = {"name": "calc_add", "mode": "add", "task": "Create calc/square.py with a function square(x) that returns x * x.",
       "hidden_test": "hidden/test_square.py",
       "reference": [{"path": "calc/square.py", "find": "", "replace": "def square(x):\n    return x * x\n"}]}
HIDDEN = "from calc.square import square\n\n\ndef test_square():\n    assert square(3) == 9\n"
NOOP = {"name": "calc_noop", "mode": "fix", "task": "",
        "seed": [{"path": "calc/ops.py", "find": "def mul(a, b):\n", "replace": "def mul(a, b):  # seeded\n"}],
        "check": {"tests_pass": ["tests/test_ops.py::test_mul"]}}
"""A fix job whose seed breaks nothing: `--check` must flag it."""

FIXED = "```python\n# calc/ops.py\ndef add(a, b):\n    return a + b\n```"
"""A oneshot fix (and the trials' first candidate): the right one."""
BREAKS_ANOTHER = "```python\n# calc/ops.py\ndef add(a, b):\n    return a + b if a == 2 else a - b\n```"
"""Makes the listed test_add pass and breaks test_add_zero of the same file."""
REWRITES_TESTS = ("```python\n# calc/ops.py\ndef add(a, b):\n    from pathlib import Path\n\n"
                  "    judge = Path(__file__).resolve().parents[1] / 'tests' / 'test_ops.py'\n"
                  "    judge.write_text('def test_nothing():\\n    pass\\n')\n    return a + b\n```")
"""Right for test_add, and rewrites the test file whenever the tests call it."""
SQUARE = "```python\n# calc/square.py\ndef square(x):\n    return x * x\n```"

SHOUT = {"id": "shout", "prompt": "Read one line and print it in upper case.",
         "example": {"stdin": "hi there\n", "stdout": "HI THERE\n"},
         "hidden": [{"stdin": "abc\n", "stdout": "ABC\n"}, {"stdin": "x y\n", "stdout": "X Y\n"}],
         "reference": "print(input().upper())\n"}
ADD_TWO = {"id": "add", "prompt": "Read two integers on one line and print their sum.",
           "example": {"stdin": "2 3\n", "stdout": "5\n"},
           "hidden": [{"stdin": "-1 1\n", "stdout": "0\n"}, {"stdin": "10 20\n", "stdout": "30\n"}],
           "reference": "a, b = map(int, input().split())\nprint(a + b)\n"}


def write_job(suite: Path, job: dict) -> Path:
    """A job folder of the evals/jobs format: job.json, repo/ (the calc package and its tests), hidden/."""
    folder = suite / job["name"]
    for rel, text in {"calc/__init__.py": "", "calc/ops.py": OPS, "tests/test_ops.py": TESTS,
                      "pyproject.toml": PYPROJECT}.items():
        (folder / "repo" / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / "repo" / rel).write_text(text, encoding="utf-8")
    if job.get("hidden_test"):
        (folder / job["hidden_test"]).parent.mkdir(parents=True, exist_ok=True)
        (folder / job["hidden_test"]).write_text(HIDDEN, encoding="utf-8")
    (folder / "job.json").write_text(json.dumps(job, indent=1), encoding="utf-8")
    return folder


def write_tasks(folder: Path, *tasks: dict) -> Path:
    """Stdout task files, one per task."""
    folder.mkdir(parents=True, exist_ok=True)
    for task in tasks:
        (folder / f"{task['id']}.json").write_text(json.dumps(task), encoding="utf-8")
    return folder


def write_replies(folder: Path, replies: dict[str, list[str]]) -> Path:
    """scripted:DIR replies: DIR/<task id>.json for each task."""
    folder.mkdir(parents=True, exist_ok=True)
    for task_id, texts in replies.items():
        (folder / f"{task_id}.json").write_text(json.dumps(texts), encoding="utf-8")
    return folder


def write_program(source: str) -> str:
    """A loop reply that writes main.py (its fenced program is also what oneshot and the trials take)."""
    return f'Action: write {{"path": "main.py"}}\n```python\n{source}```'


TIMES = ("seconds", "wall_seconds", "finished")
WHERE = ("host", "server")


def comparable(record: dict) -> dict:
    """A record without its times and host fields (the trials' own seconds included)."""
    kept = {k: v for k, v in record.items() if k not in TIMES + WHERE}
    if isinstance(kept.get("trials"), dict):
        kept["trials"] = {k: v for k, v in kept["trials"].items() if k != "seconds"}
    return kept
