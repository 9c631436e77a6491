"""Recorded runs read back for training data: each transcript as a `RunLog` (where and from which commit it ran, how
it ended, its model calls as `Step`s with the prompt each was given), and whose repo a run belongs to.

RUNS on the command line are transcript files, folders of them (searched recursively; other `.jsonl` files such as an
eval's results.jsonl are skipped) or `.tar.gz` archives of them (as `ph eval` results are sometimes committed).
"""

import io
import json
import os
import re
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.errors import UserError
from pyharness.workspace import gitops

COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
ARCHIVES = (".tar.gz", ".tgz")


@dataclass
class Step:
    """One model call of a run as its transcript holds it."""

    number: int
    prompt: list[dict]
    """The messages the model was given: the loop's conversation so far, or a trial request's one message."""
    reply: str
    finish_reason: str
    action: dict | None
    """{"name", "args"} of the call the harness ran (after parse and repair); None when the reply held none."""
    interventions: list[dict]
    observation: str
    ok: bool
    trial: dict | None
    """A trial request's framing and origin; None for a loop step."""

    @property
    def kind(self) -> str:
        """'loop' (an action turn), 'trial' (a candidate or test request) or 'oneshot' (a one-reply run's reply)."""
        if self.trial is not None:
            return "trial"
        return "loop" if self.prompt and self.prompt[0].get("role") == "system" else "oneshot"


@dataclass
class RunLog:
    """One transcript: where the run worked, how it ended, and its steps."""

    name: str
    """Where it was read from (a path, or ARCHIVE:MEMBER)."""
    file: Path
    """The file on disk that holds it (the transcript, or the archive)."""
    run_id: str
    mode: str
    task: str
    system: str
    repo: str | None
    """The folder the run worked in (recorded at its start; older transcripts: where it was written)."""
    commit: str | None
    """The commit checked out there when it started; None when not recorded (or not a git repo)."""
    outcome: str | None
    """How it ended ('done', 'stopped', 'invalid', ...); None when the transcript has no end record."""
    invalid: str | None = None
    end: dict | None = None
    """The end record (how the run ended, what the trials did), None when there is none."""
    steps: list[Step] = field(default_factory=list)

    @property
    def json_protocol(self) -> bool:
        """True when the run's replies were JSON objects (protocol=json)."""
        return '{"action": NAME' in self.system


def read_runs(paths: list[Path]) -> tuple[list[RunLog], list[str]]:
    """The transcripts under `paths`, and a note for each file passed over (not a transcript, unreadable)."""
    runs, skipped = [], []
    for path in paths:
        if not path.exists():
            raise UserError(f"{path} does not exist: give transcript files, folders of them, or .tar.gz archives")
        for name, file, text in _texts(path):
            records = [_renamed(record) for record in map(_json_line, text.splitlines()) if isinstance(record, dict)]
            if not records or records[0].get("event") != "start":
                skipped.append(f"{name}: not a ph transcript")
                continue
            runs.append(_run(name, file, records))
    return runs, skipped


def _texts(path: Path):
    """(name, file on disk, text) of every transcript file or archive member under path, in name order."""
    if path.is_dir():
        found = sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink()
                       and (p.suffix == ".jsonl" or p.name.endswith(ARCHIVES)))
        for p in found:
            yield from _texts(p)
    elif path.name.endswith(ARCHIVES):
        with tarfile.open(path, "r:gz") as archive:
            members = sorted((m for m in archive.getmembers() if m.isfile() and m.name.endswith(".jsonl")),
                             key=lambda m: m.name)
            for member in members:
                data = archive.extractfile(member)
                if data is not None:
                    text = io.TextIOWrapper(data, encoding="utf-8", errors="replace").read()
                    yield f"{path}:{member.name.removeprefix('./')}", path, text
    else:
        yield str(path), path, path.read_text(encoding="utf-8", errors="replace")


def _json_line(line: str):
    """The JSON value of a line; None for a blank line or one cut short (a run that was killed may leave one)."""
    if not line.strip():
        return None
    try:
        return json.loads(line)
    except ValueError:
        return None


LEGACY = "search"
"""What transcripts written before the trials had their name call them: a turn's `search`, the end's `search`, the
interventions `search.*`."""


def _renamed(record: dict) -> dict:
    """A record in this version's names (an older transcript's `search` fields and intervention kinds renamed)."""
    if LEGACY not in record and not _legacy_kinds(record):
        return record
    record = dict(record)
    if LEGACY in record:
        record["trial" if record.get("event") == "turn" else "trials"] = record.pop(LEGACY)
    if isinstance(record.get("interventions"), dict):
        record["interventions"] = {_kind(k): v for k, v in record["interventions"].items()}
    elif isinstance(record.get("interventions"), list):
        record["interventions"] = [{**i, "kind": _kind(str(i.get("kind", "")))} if isinstance(i, dict) else i
                                   for i in record["interventions"]]
    return record


def _legacy_kinds(record: dict) -> bool:
    kinds = record.get("interventions") or []
    names = kinds if isinstance(kinds, dict) else [i.get("kind", "") for i in kinds if isinstance(i, dict)]
    return any(str(name).startswith(f"{LEGACY}.") for name in names)


def _kind(name: str) -> str:
    return f"trials.{name.removeprefix(LEGACY + '.')}" if name.startswith(f"{LEGACY}.") else name


def _run(name: str, file: Path, records: list[dict]) -> RunLog:
    start = records[0]
    end = next((r for r in reversed(records) if r.get("event") == "end"), None)
    written = Path(str(end.get("transcript") or "")) if end else None
    origin = start.get("repo")
    if origin is None and written is not None and written.parent.name == "runs" and written.parent.parent.name == ".ph":
        origin = str(written.parents[2])
    invalid = next((r.get("reason") for r in records if r.get("event") == "invalid"), None)
    if end is not None and end.get("outcome") == "invalid":
        invalid = invalid or end.get("invalid") or end.get("reason") or "invalid"
    run = RunLog(name=name, file=file, run_id=written.stem if written and written.name else Path(name).stem,
                 mode=str(start.get("mode", "")), task=str(start.get("task", "")), system=str(start.get("system", "")),
                 repo=origin, commit=start.get("commit"), outcome=end.get("outcome") if end else None,
                 invalid=invalid, end=end)
    conversation: list[dict] = []
    for r in records:
        if r.get("event") != "turn":
            continue
        added = [dict(m) for m in r.get("new_messages") or [] if isinstance(m, dict)]
        if "trial" in r:
            prompt = added
        else:
            conversation = added if added and added[0].get("role") == "system" else conversation + added
            prompt = list(conversation)
        run.steps.append(Step(number=int(r.get("step", 0)), prompt=prompt, reply=str(r.get("reply", "")),
                              finish_reason=str(r.get("finish_reason", "stop")), action=r.get("action"),
                              interventions=list(r.get("interventions") or []),
                              observation=str(r.get("observation", "")), ok=bool(r.get("ok", False)),
                              trial=r.get("trial")))
    return run


def foreign(run: RunLog, working: Path) -> str:
    """Why a run does not belong to the working repo ('' when it does).

    It belongs when it worked in that repo; or its commit is one of the repo's (a clone or worktree of it); or the
    transcript is kept inside the repo and the folder the run worked in is gone (a throwaway copy, as `ph eval` makes
    for each run: its results folder keeps the transcripts). Anything else (another repo on this machine, a transcript
    from outside whose origin is unknown) is foreign.
    """
    working = Path(os.path.realpath(working))
    origin = Path(os.path.realpath(run.repo)) if run.repo else None
    if origin == working:
        return ""
    if run.commit and COMMIT.match(str(run.commit)) and _has_commit(working, run.commit):
        return ""
    inside = Path(os.path.realpath(run.file)).is_relative_to(working)
    if inside and (origin is None or not origin.is_dir()):
        return ""
    where = f"was made in {origin}" if origin else "names no repo and lies outside it"
    return f"{run.name} {where}, not in {working}"


def _has_commit(repo: Path, commit: str) -> bool:
    try:
        gitops.run(repo, "cat-file", "-e", f"{commit}^{{commit}}", timeout=10)
    except gitops.GitError:
        return False
    return True


def undone(run: RunLog) -> bool:
    """True when `ph undo` put back what the run changed (its undo journal was applied)."""
    if not run.repo or not Path(run.repo).is_dir():
        return False
    from pyharness.workspace.lock import repo_state_dir

    try:
        return (repo_state_dir(Path(run.repo)) / "undo" / f"{run.run_id}.applied").is_file()
    except (UserError, OSError):
        return False
