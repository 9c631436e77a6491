"""Behaviour check: replay committed transcripts of real runs through `ph eval` with the scripted model, and record or
compare what each run did (outcome, reason, steps, tokens, interventions, the search's record, each turn's action and
observation, the files it changed).

A refactor that keeps behaviour gives the same record before and after. The replies come from transcripts under
evals/results/*/transcripts/ (chat replies in order; a cloze turn's fills become the script's infills), one script per
task in a folder that `--model scripted:DIR` reads; each set replays one recorded configuration on the jobs suite or
stdout slice20. Seconds, paths and host names are left out of the record: they differ from run to run.

    python benchmarks/replay_check.py record before.json      # on the commit before the change
    python benchmarks/replay_check.py record after.json       # after it
    python benchmarks/replay_check.py compare before.json [before-again.json] after.json

Prints figures and the differences; `compare` exits 1 when any run differs.
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "evals" / "results"
VOLATILE = {"seconds", "seconds_generating", "seconds_per_check", "wall_seconds", "finished", "host", "server",
            "transcript", "model", "order", "t", "repo"}


@dataclass
class ReplaySet:
    """One replay: the suite and its tasks, whose transcripts (folder and recorded configuration) give the replies,
    and the configuration(s) they are replayed in."""

    name: str
    suite: str
    tasks: str | None
    source: str
    recorded: str
    configs: str


SETS = [
    ReplaySet("jobs-every-layer", "jobs", None, "deepcloze-jobs", "without=none", "harness=on"),
    ReplaySet("jobs-without-deepcloze", "jobs", None, "deepcloze-jobs", "without=deepcloze", "without=deepcloze"),
    ReplaySet("jobs-without-cloze", "jobs", None, "small-jobs", "without=cloze", "without=cloze harness=on,off"),
    ReplaySet("jobs-sandbox", "jobs", None, "sandbox-jobs", "harness=on_sandbox=on", "harness=on"),
    ReplaySet("slice20-every-layer", "stdout", "@evals/stdout/slice20.txt", "small-slice20", "without=none",
              "protocol=text,oneshot harness=on,off"),
    ReplaySet("slice20-without-stdimports", "stdout", "@evals/stdout/slice20.txt", "small-slice20",
              "without=stdimports", "without=stdimports"),
]


def script_of(transcript: Path) -> dict:
    """A scripted model's replies (and infills) from one transcript: the chat replies in order; a cloze turn's
    fills, in order, as the infills (left out when the run had none, so the model has no fill-in-the-middle)."""
    replies, infills = [], []
    for line in transcript.read_text(encoding="utf-8").splitlines():
        record = json.loads(line) if line.strip() else {}
        if record.get("event") != "turn" or not isinstance(record.get("reply"), str):
            continue
        trial = record.get("trial") or record.get("search") or {}  # committed transcripts predate the name
        if trial.get("framing") == "cloze":
            infills += [{"text": f["text"], "logprob": f.get("logprob")} for f in trial.get("fills", [])]
        else:
            replies.append(record["reply"])
    return {"replies": replies, **({"infills": infills} if infills else {})}


def write_scripts(replay: ReplaySet, folder: Path) -> int:
    """DIR/<task id>.json for every transcript of the set's recorded configuration; how many."""
    folder.mkdir(parents=True)
    found = sorted((RESULTS / replay.source / "transcripts").glob(f"*__{replay.recorded}__r0.jsonl"))
    for transcript in found:
        task = transcript.name.split("__")[0]
        (folder / f"{task}.json").write_text(json.dumps(script_of(transcript)), encoding="utf-8")
    return len(found)


def stable(value):
    """`value` without the fields that differ from run to run (seconds, paths, times)."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def digest(text: str, repo: str) -> str:
    """A short hash of an observation, with the run's temp repo path and the checkout's own path taken out (a stdout
    check's traceback names the interpreter, which lives in the checkout's venv: two checkouts would differ there)."""
    return hashlib.sha256(text.replace(repo, "<repo>").replace(str(ROOT), "<ph>").encode()).hexdigest()[:12]


def run_record(record: dict, out: Path) -> dict:
    """One run as the check compares it: the eval's record plus, from its transcript, each turn and the end."""
    summary = stable(record)
    turns, changed = [], None
    path = out / record["transcript"] if record.get("transcript") else None
    events = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path else []
    repo = next((e.get("repo", "") for e in events if e["event"] == "start"), "") or "\0"
    for event in events:
        if event["event"] == "turn":
            turns.append({"step": event.get("step"), "action": event.get("action"), "ok": event.get("ok"),
                          "interventions": [i["kind"] for i in event.get("interventions") or []],
                          "observation": digest(str(event.get("observation", "")), repo),
                          "prompt": digest(json.dumps(event.get("new_messages")), repo)})
        elif event["event"] == "end":
            changed = event.get("changed")
    summary["events"] = [e["event"] for e in events]
    summary["turns"], summary["changed"] = turns, changed
    return summary


def record(out_file: Path, only: list[str]) -> None:
    """Replay every set and write the runs' records to `out_file`."""
    ph = Path(sys.executable).parent / "ph"
    runs: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(prefix="ph-replay-") as tmp:
        for replay in SETS:
            if only and replay.name not in only:
                continue
            scripts, out = Path(tmp) / replay.name / "scripts", Path(tmp) / replay.name / "out"
            count = write_scripts(replay, scripts)
            command = [str(ph), "eval", replay.suite, "--model", f"scripted:{scripts}", "--configs", replay.configs,
                       "--max-steps", "8", "--max-seconds", "900", "--out", str(out)]
            command += ["--tasks", replay.tasks] if replay.tasks else []
            print(f"{replay.name}: {count} scripts, {' '.join(command[1:3])} --configs {replay.configs}", flush=True)
            # a set's repr follows string hashing (a traced value such as {'*', '+'} is shown to the model): fixed
            env = {**os.environ, "PYTHONHASHSEED": "0"}
            subprocess.run(command, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, env=env)
            for line in (out / "results.jsonl").read_text(encoding="utf-8").splitlines():
                result = json.loads(line)
                runs[f"{replay.name}/{result['task']}/{result['config']}"] = run_record(result, out)
    out_file.write_text(json.dumps(runs, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(figures(runs))


def figures(runs: dict[str, dict]) -> str:
    """Runs, outcomes and passes, and total steps, per set."""
    lines = []
    for name in dict.fromkeys(key.split("/")[0] for key in runs):
        mine = [r for key, r in runs.items() if key.split("/")[0] == name]
        outcomes: dict[str, int] = {}
        for r in mine:
            outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
        lines.append(f"{name}: {len(mine)} runs, passed {sum(r['pass_strict'] for r in mine)}, "
                     f"steps {sum(r['steps'] for r in mine)}, outcomes {dict(sorted(outcomes.items()))}")
    return "\n".join(lines)


RENAMED = {"(search: ": "(trials: ", "; search: ": "; trials: "}
"""Names issue 39 changed in what a run records (the trials were called search): the record key `search`, the
intervention kinds `search.*` and the label in a reason."""


def renamed(value):
    """A record in the current names (a record made before issue 39 calls the trials `search`)."""
    if isinstance(value, dict):
        return {("trials" if k == "search" else renamed(k)): renamed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v) for v in value]
    if isinstance(value, str):
        value = "trials." + value[len("search."):] if value.startswith("search.") else value
        value = "trials; " + value[len("search; "):] if value.startswith("search; ") else value
        for old, new in RENAMED.items():
            value = value.replace(old, new)
    return value


def compare(befores: list[Path], after_file: Path) -> int:
    """Print the runs that differ, field by field; 0 when every run is the same (names renamed since are read in
    their new form). With two or more records from before, a field they already disagree on for a run (a program's
    own output that varies from run to run) is listed as noise, not as a difference."""
    before, *again = (renamed(json.loads(p.read_text(encoding="utf-8"))) for p in befores)
    after = renamed(json.loads(after_file.read_text(encoding="utf-8")))
    print(f"before ({befores[0]}):\n{figures(before)}\nafter ({after_file}):\n{figures(after)}")
    differ, noise = 0, 0
    for key in sorted(set(before) | set(after)):
        a, b = before.get(key), after.get(key)
        if a is None or b is None:
            differ += 1
            print(f"{key}: only {'after' if a is None else 'before'}")
            continue
        fields = [f for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
        noisy = [f for f in fields if any(other.get(key, {}).get(f) != a.get(f) for other in again)]
        noise += bool(noisy)
        for field in noisy:
            print(f"{key}: {field} varies between the records from before (noise)")
        for field in (f for f in fields if f not in noisy):
            print(f"{key}: {field}: {json.dumps(a.get(field))[:300]} -> {json.dumps(b.get(field))[:300]}")
        differ += bool(set(fields) - set(noisy))
    total = len(set(before) | set(after))
    print(f"{total - differ} of {total} runs the same ({noise} with a field that varied before too), {differ} differ")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="replay every set and write the runs' records")
    rec.add_argument("out", type=Path)
    rec.add_argument("--only", default="", help="comma-separated set names (default: all)")
    cmp = sub.add_parser("compare", help="compare records from before (one or more) with one from after")
    cmp.add_argument("records", type=Path, nargs="+", help="BEFORE [BEFORE ...] AFTER")
    args = parser.parse_args()
    if args.command == "record":
        record(args.out, [n for n in args.only.split(",") if n])
        return 0
    if len(args.records) < 2:
        parser.error("compare needs a record from before and one from after")
    return compare(args.records[:-1], args.records[-1])


if __name__ == "__main__":
    sys.exit(main())
