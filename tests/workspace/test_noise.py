"""noise: two runs of the same noisy command read byte-identical after normalise(); real content survives."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pyharness.workspace.noise import PYTEST_QUIET_ARGS, QUIET_ENV, normalise, truncate

DATA = Path(__file__).parents[1] / "data" / "noise"
ROOTS = {entry["file"]: entry["root"] for entry in json.loads((DATA / "roots.json").read_text(encoding="utf-8"))}

FAILING_TEST = """import os
import random
import time


class Order:
    def __init__(self, total):
        self.total = total


def total_with_tax(prices):
    return round(sum(prices) * 1.05, 2)


def test_total(tmp_path):
    start = time.perf_counter()
    time.sleep(random.uniform(0.01, 0.2))
    print(f"wrote {tmp_path / 'orders.csv'} in {time.perf_counter() - start:.4f}s (pid {os.getpid()})")
    order = Order(total_with_tax([100.0]))
    assert order.total == 100.0, f"bad total on {order!r}"


def test_ok():
    assert total_with_tax([]) == 0
"""


def read(name: str) -> str:
    with open(DATA / name, encoding="utf-8", newline="") as f:
        return f.read()


@pytest.mark.parametrize(
    "first,second",
    [
        ("pytest_full_1.txt", "pytest_full_2.txt"),
        ("pytest_q_1.txt", "pytest_q_2.txt"),
        ("pip_download_1.txt", "pip_download_2.txt"),
        ("tqdm_1.txt", "tqdm_2.txt"),
    ],
)
def test_recorded_pairs_become_identical(first: str, second: str) -> None:
    a, b = read(first), read(second)
    assert a != b
    assert normalise(a, root=ROOTS.get(first)) == normalise(b, root=ROOTS.get(second))


@pytest.mark.parametrize("name", ["pytest_full_1.txt", "pytest_q_1.txt"])
def test_recorded_pytest_keeps_what_matters(name: str) -> None:
    out = normalise(read(name), root=ROOTS[name])
    assert "E       assert 105.0 == 100.0" in out
    assert "test_orders.py:21: AssertionError" in out
    assert "1 failed, 1 passed in <T>s" in out
    assert "Order object at 0x<addr>>" in out
    assert "tmp_path = PosixPath('<tmp>')" in out
    assert "loaded <tmp>/orders.csv in <T>s (pid <pid>)" in out
    assert ROOTS[name] not in out and "/tmp/" not in out


def test_recorded_pip_and_tqdm_read_cleanly() -> None:
    pip = normalise(read("pip_download_1.txt"))
    assert "   <progress> <size> <speed> eta <T>\n" in pip
    assert "Downloading requests-2.32.3-py3-none-any.whl (<size>)" in pip
    assert "\x1b" not in pip and "\r" not in pip
    tqdm = normalise(read("tqdm_1.txt"))
    assert tqdm.splitlines()[:3] == [
        "<time> INFO train: starting run (pid <pid>)",
        "Epoch 1/2: <progress>",
        "epoch 1: loss=0.4320 accuracy=0.8750",
    ]
    assert "Saved checkpoint to <tmp>/ckpt.pt (<size>) in <T>s" in tqdm


def _run_pytest(repo: Path, args: list[str]) -> str:
    env = {**os.environ, **QUIET_ENV}
    env.pop("PYTEST_ADDOPTS", None)
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *args, "test_orders.py"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.parametrize("args", [["-p", "no:cacheprovider"], PYTEST_QUIET_ARGS], ids=["full", "quiet"])
def test_two_real_pytest_runs_normalise_identically(tmp_path: Path, args: list[str]) -> None:
    outputs = []
    for name in ("first", "second"):
        repo = tmp_path / name / "shop"
        repo.mkdir(parents=True)
        (repo / "test_orders.py").write_text(FAILING_TEST, encoding="utf-8")
        outputs.append((_run_pytest(repo, args), str(repo)))
    (a, root_a), (b, root_b) = outputs
    assert a != b
    norm_a, norm_b = normalise(a, root=root_a), normalise(b, root=root_b)
    assert norm_a == norm_b
    assert "assert 105.0 == 100.0" in norm_a and "test_orders.py:20: AssertionError" in norm_a
    assert "1 failed, 1 passed in <T>s" in norm_a
    assert not (tmp_path / "first" / "shop" / ".pytest_cache").exists()


def test_ansi_and_carriage_returns() -> None:
    coloured = "\x1b[31mFAILED\x1b[0m test_x.py::test_a - \x1b[1massert 1 == 2\x1b[0m\r\n"
    assert normalise(coloured) == "FAILED test_x.py::test_a - assert 1 == 2\n"
    assert normalise("\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\") == "link"
    assert normalise("\x1b\x1b[0m[31m") == "[31m"  # stripping never assembles a new escape
    assert normalise("10%\r50%\r100% done\r\nnext") == "100% done\nnext"
    assert normalise("loading...\r") == "loading..."


@pytest.mark.parametrize(
    "raw,expected",
    [
        ("1 failed, 2 passed in 0.53s", "1 failed, 2 passed in <T>s"),
        ("took 0.12 seconds", "took <T> seconds"),
        ("1 passed in 61.20s (0:01:01)", "1 passed in <T>s (<T>)"),
        ("step 1.2ms, call 15 ms", "step <T>ms, call <T> ms"),
        ("150.3 MB/s and 2.1 kB/s, 35.12it/s, 1.5s/it", "<speed> and <speed>, <speed>, <speed>"),
        ("file (12.5 MB), 300 kB, 1.2 GiB, 62.6/62.6 kB", "file (<size>), <size>, <size>, <size>"),
        ("Downloading: 45%|████▌     | 45/100 [00:01<00:02, 35.12it/s]", "Downloading: <progress>"),
        ("[#####     ] 45%", "<progress>"),
        ("12it [00:03, 3.91it/s]", "12it [<T>]"),
        ("45% [=====>    ]", "<progress>"),
        ("   ━━━━━━━━━━━━━━━━━━━━ 8.4/18.2 MB 5.1 MB/s eta 0:00:02", "   <progress> <size> <speed> eta <T>"),
        ("<Order object at 0x7f3a2b1c>", "<Order object at 0x<addr>>"),
        ("segfault at 0x7f3a2b1c4d50 in libc", "segfault at 0x<addr> in libc"),
        ("/tmp/pytest-of-root/pytest-12/test_x0/data.csv", "<tmp>/data.csv"),
        ("PosixPath('/tmp/pytest-of-root/pytest-12/test_x0')", "PosixPath('<tmp>')"),
        ("/tmp/tmpab12cd34/out.json", "<tmp>/out.json"),
        ("/var/folders/qz/x7l2k1cd5vb/T/tmpab12cd34/a.py", "<tmp>/a.py"),
        ("/private/var/folders/qz/x7l2k1cd5vb/T/a.py", "<tmp>/a.py"),
        ("worker pid 12345 exited; pid=77", "worker pid <pid> exited; pid <pid>"),
        ("Process 4242 finished", "Process <pid> finished"),
        ("python[12345]: started", "python[<pid>]: started"),
        ("2026-11-29 11:08:26 INFO ready", "<time> INFO ready"),
        ("2026-11-29T11:08:26.123Z ready", "<time> ready"),
        ("[11:08:26] ready", "[<time>] ready"),
    ],
)
def test_noise_is_replaced(raw: str, expected: str) -> None:
    assert normalise(raw) == expected


@pytest.mark.parametrize(
    "line",
    [
        "test_x.py:42: AssertionError",
        '  File "/work/app/orders/tax.py", line 17, in total',
        "E       assert 105.0 == 100.0",
        "E        +  where 105.0 = total([100.0])",
        "1 failed, 2 passed",
        "FAILED tests/test_tax.py::test_rate[0.5-10] - assert 5 == 10",
        "orders/tax.py:12:30: F821 undefined name 'rate'",
        "    total = price * 1.05 + 12",
        "    mask = 0xFF; xs[100] = 3",
        "version 2.32.3 on python 3.11",
        "ValueError: expected 4 bytes, got 3 bytes",
        "coverage: 45% of lines",
        "tests/test_a.py ..F.                                                     [100%]",
        "run(timeout=30, retries=3)",
        "=============================== FAILURES ===============================",
    ],
)
def test_real_content_is_kept(line: str) -> None:
    assert normalise(line) == line


def test_root_makes_paths_relative() -> None:
    text = "rootdir: /work/repo\n/work/repo/orders/tax.py:3: in total\n/work/repox/a.py\n/x/work/repo/b.py\n"
    assert (
        normalise(text, root="/work/repo/")
        == "rootdir: .\norders/tax.py:3: in total\n/work/repox/a.py\n/x/work/repo/b.py\n"
    )


def test_pytest_summary_is_recentred_whatever_the_digits() -> None:
    short = "=" * 25 + " 1 failed, 1 passed in 9.90s " + "=" * 26
    long = "=" * 25 + " 1 failed, 1 passed in 10.90s " + "=" * 25
    assert len(short) == len(long) == 80
    assert normalise(short) == normalise(long)
    assert len(normalise(short)) == 80


def test_truncate_keeps_short_text() -> None:
    assert truncate("a\nb\n", 100) == "a\nb\n"


def test_truncate_keeps_more_tail_than_head() -> None:
    text = "".join(f"line {n:03d}\n" for n in range(200))
    out = truncate(text, 600)
    assert len(out) <= 600
    head, _, tail = out.partition("... [")
    assert head.startswith("line 000\n") and tail.endswith("line 199\n")
    omitted = int(tail.split(" lines omitted] ...\n")[0])
    kept = out.count("\n") - 1
    assert kept + omitted == 200
    assert tail.count("\n") > 1.5 * head.count("\n")
    assert all(line.startswith("line ") for line in out.splitlines() if "omitted" not in line)


def test_truncate_head_parameter_and_one_huge_line() -> None:
    text = "".join(f"line {n:03d}\n" for n in range(200))
    assert truncate(text, 600, head=0).startswith("... [")
    huge = "x" * 5000 + "END"
    out = truncate(huge, 300)
    assert out.startswith("... [1 lines omitted] ...\n") and out.endswith("xEND") and len(out) <= 300


NOISY = st.text(
    alphabet=st.sampled_from(list("0123456789:.,/%|#=>[]()<- \n\r\tsmkMBGit_xabcdefT█━\x1bZpdPro")), max_size=300
)


@settings(max_examples=500, deadline=None)
@given(st.one_of(NOISY, st.text(max_size=300)))
def test_normalise_is_idempotent(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once


@settings(max_examples=300, deadline=None)
@given(NOISY, st.sampled_from(["/w/r", "/tmp/pytest-of-root/pytest-3/t0/repo", "/r"]))
def test_normalise_with_root_is_idempotent(text: str, root: str) -> None:
    mixed = text.replace("|", root + "/").replace("#", root)
    once = normalise(mixed, root=root)
    assert normalise(once, root=root) == once


def _best_of_three(text: str) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        normalise(text, root="/tmp/recfull/shop")
        times.append(time.perf_counter() - start)
    return min(times)


@pytest.mark.parametrize("kind", ["realistic", "digits", "brackets", "dotted", "equals"])
def test_normalise_is_fast_on_100kb(kind: str) -> None:
    sample = read("pytest_full_1.txt") + read("pip_download_1.txt") + read("tqdm_1.txt")
    text = {
        "realistic": sample * (100_000 // len(sample) + 1),
        "digits": "1" * 100_000,
        "brackets": "[" + "=" * 50_000 + "[#" * 25_000,
        "dotted": "a." * 50_000 + "[1]",
        "equals": ("= " * 500 + "x\n") * 100,
    }[kind][:100_000]
    assert _best_of_three(text) < 0.1
