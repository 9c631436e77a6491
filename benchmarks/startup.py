"""Benchmark: how fast `ph --help` answers (no heavy import at start-up). Prints figures; asserts nothing."""

import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 10


def main() -> None:
    ph = Path(sys.executable).with_name("ph")
    cmd = [str(ph), "--help"] if ph.exists() else [sys.executable, "-m", "pyharness.cli", "--help"]
    subprocess.run(cmd, capture_output=True, check=True)  # warm the file cache
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
    heavy = subprocess.run([sys.executable, "-X", "importtime", "-c", "import pyharness.cli.main"], capture_output=True,
                           text=True).stderr
    loaded = [m for m in ("llama_cpp", "ollama", "httpx", "rich", "pydantic", "git ") if f"| {m}" in heavy]
    print(f"ph --help: median {statistics.median(times) * 1000:.0f} ms, min {min(times) * 1000:.0f} ms, "
          f"max {max(times) * 1000:.0f} ms over {RUNS} runs (target < 500 ms)")
    print(f"heavy modules imported by `import pyharness.cli.main`: {', '.join(loaded) or 'none'}")


if __name__ == "__main__":
    main()
