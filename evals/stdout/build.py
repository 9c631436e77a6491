"""(Re)compute the expected outputs of every stdout eval task from its reference solution.

Usage:
    python evals/stdout/build.py            # rewrite example/hidden "stdout" fields in tasks/*.json
    python evals/stdout/build.py --check    # only verify; exit 1 if any stored output is stale

Each task's ``reference`` is run as ``[sys.executable, "-c", reference]`` once per case, with the case's
``stdin`` piped in and the task's ``time_limit``. A reference that exits non-zero, writes to stderr or times
out aborts the build. Files are written as ``json.dumps(obj, indent=1, ensure_ascii=False) + "\\n"``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS_DIR = HERE / "tasks"


def run_reference(reference: str, stdin: str, time_limit: float) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", reference],
        input=stdin,
        check=False,
        capture_output=True,
        text=True,
        timeout=time_limit,
    )
    if proc.returncode != 0 or proc.stderr:
        raise RuntimeError(f"reference failed (rc={proc.returncode}) on stdin {stdin[:60]!r}:\n{proc.stderr}")
    return proc.stdout


def dump(task: dict) -> str:
    return json.dumps(task, indent=1, ensure_ascii=False) + "\n"


def build_task(path: Path, check: bool) -> bool:
    """Recompute one task's outputs. Returns True if the file is (or would be) changed."""
    original = path.read_text(encoding="utf-8")
    task = json.loads(original)
    limit = float(task.get("time_limit", 5))
    for case in [task["example"], *task["hidden"]]:
        case["stdout"] = run_reference(task["reference"], case["stdin"], limit)
    new = dump(task)
    changed = new != original
    if changed and not check:
        path.write_text(new, encoding="utf-8")
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="verify only, do not write")
    parser.add_argument("ids", nargs="*", help="only these task ids (default: all)")
    args = parser.parse_args(argv)

    paths = sorted(TASKS_DIR.glob("*.json"))
    if args.ids:
        paths = [p for p in paths if p.stem in set(args.ids)]
    with ThreadPoolExecutor(max_workers=4) as pool:
        changed = dict(zip(paths, pool.map(lambda p: build_task(p, args.check), paths)))
    stale = [p.stem for p, c in changed.items() if c]
    verb = "stale" if args.check else "updated"
    print(f"{len(paths)} tasks, {len(stale)} {verb}" + (": " + ", ".join(stale) if stale else ""))
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
