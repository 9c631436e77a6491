"""The stdimports layer: a candidate's forgotten standard-library imports are added before its check (issue 24
item 4; unseen stdout samples died of `NameError: name 'datetime' is not defined`), and its record says so."""

from pathlib import Path

import pytest

from pyharness.evals.demo import make_repo
from pyharness.evals.runner import make_stdout_repo
from pyharness.evals.tasks import Case, StdoutTask, task_message
from pyharness.harness.imports import stdlib_imports, with_stdlib_imports
from pyharness.harness.pipeline import LAYERS, HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel

WITHOUT = ",".join(name for name in LAYERS if name != "stdimports")


@pytest.mark.parametrize(("code", "line"), [
    ("print(datetime.date.today())\n", "import datetime"),
    ("d = datetime.timedelta(days=1)\n", "import datetime"),
    ("print(datetime.now())\n", "from datetime import datetime"),
    ("print(datetime.strptime('2024-01-01', '%Y-%m-%d'))\n", "from datetime import datetime"),
    ("print(datetime(2024, 1, 1))\n", "from datetime import datetime"),
    ("print(stdin.read())\n", "from sys import stdin"),
    ("print(sys.stdin.read())\n", "import sys"),
    ("c = Counter('aab')\n", "from collections import Counter"),
    ("p = Path('x')\n", "from pathlib import Path"),
    ("print(sqrt(2))\n", "from math import sqrt"),
    ("x = random()\n", "from random import random"),
    ("x = random.randint(1, 6)\n", "import random"),
])
def test_an_undefined_stdlib_name_gets_its_import(code: str, line: str) -> None:
    assert with_stdlib_imports(code) == (f"{line}\n{code}", [line])


def test_imports_are_one_per_line_in_a_fixed_order_and_only_the_stdlib_ones() -> None:
    code = "import numpy as np\n\nrows = [deque(), defaultdict(list)]\nprint(sys.argv, pandas.DataFrame(), total)\n"
    new, added = with_stdlib_imports(code)
    assert added == ["from collections import defaultdict", "from collections import deque", "import sys"]
    assert new == "".join(f"{line}\n" for line in added) + code  # pandas and total are no standard names


@pytest.mark.parametrize("code", [
    "def datetime():\n    return 1\n\n\nprint(datetime.now())\n",
    "datetime = 3\nprint(datetime.now)\n",
    "import datetime\nprint(datetime.date.today())\n",
    "from datetime import datetime\nprint(datetime.now())\n",
    "print(numpy.zeros(3))\n",
    "print(string)\n",  # a module name used as a value is a forgotten variable, not the module
    "print(datetime.now(), datetime.timedelta(days=1))\n",  # the class and the module: neither import makes both work
    "def f(:\n    return datetime.now()\n",  # does not parse
    "print(1)\n",
])
def test_nothing_is_added_to_code_that_defines_imports_or_cannot_use_the_name(code: str) -> None:
    assert with_stdlib_imports(code) == (code, [])


def test_the_docstring_future_imports_shebang_and_line_endings_stay_first() -> None:
    code = '"""Dates."""\nfrom __future__ import annotations\n\n\ndef today() -> str:\n    return str(date.today())\n'
    new, added = with_stdlib_imports(code)
    assert added == ["from datetime import date"]
    assert new == code.replace("annotations\n", "annotations\nfrom datetime import date\n")
    script = "#!/usr/bin/env python3\n# -*- coding: utf-8 -*-\n# sums the input\nprint(sum(map(int, stdin)))\n"
    assert with_stdlib_imports(script)[0] == script.replace("# sums", "from sys import stdin\n# sums")
    windows = '"""Doc."""\r\nprint(math.pi)\r\n'
    assert with_stdlib_imports(windows)[0] == '"""Doc."""\r\nimport math\r\nprint(math.pi)\r\n'
    assert with_stdlib_imports('"""Doc."""')[0] == '"""Doc."""'


def test_skipped_names_are_left_alone() -> None:
    code = "print(sys.argv, math.pi)\n"
    assert with_stdlib_imports(code, skip={"sys"}) == ("import math\n" + code, ["import math"])


def test_the_lint_repair_adds_all_or_nothing() -> None:
    assert stdlib_imports("print(stdin.read(), Counter())\n")[1] == ["from collections import Counter",
                                                                    "from sys import stdin"]
    assert stdlib_imports("print(stdin.read(), total)\n") is None  # `total` has no home: the refusal says so
    future = "from __future__ import annotations\nprint(sys.argv)\n"
    assert stdlib_imports(future)[0] == "from __future__ import annotations\nimport sys\nprint(sys.argv)\n"


NEXT_DAY = StdoutTask(
    id="t_next_day", prompt="Read a date as YYYY-MM-DD and print the day after it in the same form.",
    example=Case("2024-02-28\n", "2024-02-29\n"), hidden=[Case("2023-12-31\n", "2024-01-01\n")])
FORGETS_DATETIME = ("```python\nday = datetime.date.fromisoformat(input().strip())\n"
                    "print(day + datetime.timedelta(days=1))\n```")


def run(repo: Path, mode: str, task: str, replies: list[str], layers: str | None = None):
    result = run_job(repo, mode, task, ScriptedModel(replies=replies),
                     config=AgentConfig(max_steps=len(replies), schedule="plain@0"),
                     harness=HarnessConfig.parse_spec("on", layers), default_write_path="main.py")
    turns = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]
    return result, turns


def test_stdout_a_candidate_that_forgets_import_datetime_passes_and_says_so(tmp_path) -> None:
    repo = make_stdout_repo(tmp_path / "repo", NEXT_DAY)
    result, turns = run(repo, "stdout", task_message(NEXT_DAY), [FORGETS_DATETIME])
    assert result.outcome == "done" and result.trials["passed_by"] == "greedy", result.reason
    assert (repo / "main.py").read_text().startswith("import datetime\nday = datetime.date.fromisoformat(")
    assert turns[0]["trial"]["imports_added"] == {"main.py": ["import datetime"]}
    end = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "end"][0]
    assert end["trials"]["imports_added"] == {"greedy": {"main.py": ["import datetime"]}}
    assert result.interventions["trials.imports"] == 1
    assert {"kind": "trials.imports", "detail": "import datetime"} in turns[0]["interventions"]


def test_stdout_without_the_layer_the_candidate_fails_as_before(tmp_path) -> None:
    repo = make_stdout_repo(tmp_path / "repo", NEXT_DAY)
    result, turns = run(repo, "stdout", task_message(NEXT_DAY), [FORGETS_DATETIME], layers=WITHOUT)
    assert result.outcome == "stopped" and result.trials["run"] == 1
    assert "NameError: name 'datetime' is not defined" in turns[0]["observation"]
    assert "imports_added" not in turns[0]["trial"] and result.trials["imports_added"] == {}


def test_fix_the_import_a_function_needs_goes_to_the_top_of_its_file(tmp_path, demo_jobs) -> None:
    repo = make_repo(tmp_path / "orders", demo_jobs["fix"])
    before = (repo / "orders/pricing.py").read_text()
    uses_operator = ("```python\ndef bulk_discount(line: OrderLine) -> float:\n"
                     "    if operator.ge(line.quantity, BULK_THRESHOLD):\n"
                     "        return round(line.total() * BULK_RATE, 2)\n    return 0.0\n```")
    result, turns = run(repo, "fix", "", [uses_operator])
    assert result.outcome == "done", result.reason
    after = (repo / "orders/pricing.py").read_text()
    assert after.startswith('"""Order subtotal and discounts."""\nimport operator\n\nfrom orders.lines import')
    assert after.split("def bulk_discount")[0] == before.split("def bulk_discount")[0].replace(
        '"""\n', '"""\nimport operator\n', 1)  # nothing else above the function changed
    assert turns[0]["trial"]["imports_added"] == {"orders/pricing.py": ["import operator"]}


def test_add_the_new_file_gets_its_import(tmp_path, demo_jobs) -> None:
    repo = make_repo(tmp_path / "orders", demo_jobs["ask"])
    task = 'Create a new file orders/greet.py with a function `greet(name: str) -> str` returning "Hello, Name!".'
    test = ("```python\nfrom orders.greet import greet\n\n\ndef test_greet():\n"
            "    assert greet('ann lee') == 'Hello, Ann Lee!'\n```")
    impl = "```python\ndef greet(name: str) -> str:\n    return f'Hello, {string.capwords(name)}!'\n```"
    result, turns = run(repo, "add", task, [test, impl])
    assert result.outcome == "done", result.reason
    assert (repo / "orders/greet.py").read_text().startswith("import string\ndef greet(")
    assert turns[1]["trial"]["imports_added"] == {"orders/greet.py": ["import string"]}
