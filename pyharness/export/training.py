"""`ph export`: training data from recorded runs, as plain JSONL (nothing of `datasets` or TRL is needed to write it).

sft: one chat example per accepted loop step, `{"messages": [...]}`: the prompt is the conversation the model was given
at that step (system prompt, task, its earlier replies as it wrote them, the observations; a history the context layer
compacted is exported whole), the assistant turn is the canonical form of the call the harness ran
(`pyharness.export.canonical`), never the raw reply and without the reply's Thought line. A step is left out, and
counted,
when it held no valid action, was cut off, refused (its observation is an `Error:`), flagged by the loop layer, or
when the run's record contradicts it: the run ended invalid (fix mode: test files or test config changed), `ph undo`
put its changes back, or the transcript has no end. A trial candidate that passed its check is an example too: its
one request message -> its code in a ```python fence (with the standard-library imports the harness added to it; a
`line` or `guesses` request asks for words, so the reply itself); not when the job refused that pass. Cloze fills
are left out: their fill-in-the-middle prompt is not recorded.

dpo: `{"prompt", "chosen", "rejected"}` pairs in TRL's conversational form. From the trials: for the same request, a
passing candidate against a failing one (each distinct failing reply is paired once, passing ones taken in turn). From
the loop: an accepted step whose reply the harness had to mend (a parse or repair intervention, a path steered to
the task's file, restated calls skipped), its canonical call against the raw reply.

Every row carries `source`: the run id, the commit the run started from ('' when the transcript predates that
record), the step, its kind and the transcript's file name; and every string in it passes `redact.redact`.
"""

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.actions import registry
from pyharness.export.canonical import canonical_reply, fenced, reads_back
from pyharness.export.runlog import RunLog, Step, undone
from pyharness.trials.candidates import extract_code
from pyharness.workspace.redact import redact_data

NO_ACTION, CUT_OFF, REFUSED, LOOPING = "no valid action", "cut off", "refused", "flagged as a loop"
INVALID, UNDONE, UNFINISHED, ONESHOT = "run invalid", "change undone", "run unfinished", "one-shot run"
NOT_CANONICAL = "no canonical form"
FAILED, CLOZE = "trial candidate failed its check", "cloze fill (prompt not recorded)"
NOT_CANDIDATE, JOB_REFUSED = "trial request for a test (not checked alone)", "job refused the passing candidate"
LOOP_KINDS = ("loops.repeat", "loops.pingpong", "loops.same_error")
REPAIRED = ("parse.", "repair.", "steer.default_path", "loops.skip_repeat")
"""Interventions that mean the reply was not the call as the protocol writes it ('repair.prefill' aside: that
step's recorded reply begins with the harness's own prefix)."""
PROSE_FRAMINGS = ("line", "guesses")


@dataclass
class Tally:
    """What an export made, by kind, and what it left out, by reason."""

    made: Counter = field(default_factory=Counter)
    dropped: Counter = field(default_factory=Counter)
    runs: int = 0

    def lines(self, noun: str) -> list[str]:
        """The counts, as the command prints them."""
        kinds = ", ".join(f"{n} {kind}" for kind, n in self.made.most_common())
        out = [f"{sum(self.made.values())} {noun}" + (f" ({kinds})" if kinds else "") + f" from {self.runs} run(s)"]
        if self.dropped:
            reasons = ", ".join(f"{n} {why}" for why, n in self.dropped.most_common())
            out.append(f"left out {sum(self.dropped.values())} step(s): {reasons}")
        return out


def run_problem(run: RunLog) -> str:
    """Why no step of a run is learnt from ('' when its record stands)."""
    if run.outcome is None:
        return UNFINISHED
    if run.invalid:
        return INVALID
    if undone(run):
        return UNDONE
    return ""


def step_problem(step: Step) -> str:
    """Why a loop step's call is not one to learn from ('' when the harness ran it and let it stand)."""
    if step.action is None:
        cut = step.finish_reason == "length" or step.observation.startswith("(not run: the time budget")
        return CUT_OFF if cut else NO_ACTION
    if step.observation.startswith("Error: "):
        return REFUSED
    if any(i.get("kind") in LOOP_KINDS for i in step.interventions):
        return LOOPING
    return ""


def source(run: RunLog, step: Step, kind: str, rejected: tuple[RunLog, Step] | None = None) -> dict:
    """Where a row comes from: the same keys and types in every row and in `ph distill`'s ('' or 0 where one does not
    apply, never null: a JSON loader that meets null first types the column null and refuses a value later)."""
    return {"run": run.run_id, "commit": run.commit or "", "step": step.number, "kind": kind,
            "transcript": Path(run.name).name, "rejected_run": rejected[0].run_id if rejected else "",
            "rejected_step": rejected[1].number if rejected else 0, "teacher": ""}


def canonical(run: RunLog, step: Step) -> str | None:
    """The canonical reply of the step's call, or None when it does not read back as that call."""
    actions = registry()
    name, args = step.action["name"], step.action.get("args") or {}
    text = canonical_reply(name, args, actions, json_protocol=run.json_protocol)
    return text if reads_back(text, name, args, actions, json_protocol=run.json_protocol) else None


def code_reply(step: Step) -> str:
    """A trial reply as an example shows it: the code fenced (with the imports the harness added), or, where the
    request asked for words (or the reply held no code), the reply itself."""
    if (step.trial or {}).get("framing") in PROSE_FRAMINGS:
        return step.reply.strip()
    code = extract_code(step.reply)
    if code is None:
        return step.reply.strip()
    added = [line for lines in ((step.trial or {}).get("imports_added") or {}).values() for line in lines]
    missing = [line for line in dict.fromkeys(added) if line not in code.splitlines()]
    return fenced("\n".join(missing) + "\n" + code if missing else code)


def trial_verdict(run: RunLog, step: Step, job_refused: bool) -> str:
    """'' for a trial candidate that passed its check and stands, else why it is no SFT example."""
    if (step.action or {}).get("name") != "candidate":
        return NOT_CANDIDATE
    if (step.trial or {}).get("framing") == "cloze":
        return CLOZE
    if not step.ok:
        return FAILED
    return JOB_REFUSED if job_refused else ""


def sft_rows(runs: list[RunLog], tally: Tally) -> Iterator[dict]:
    """SFT examples of every run, counting what is made and what is left out."""
    for run in runs:
        tally.runs += 1
        whole = run_problem(run)
        refused = _job_refused(run)
        for step in run.steps:
            kind = step.kind
            why = whole or (ONESHOT if kind == "oneshot" else step_problem(step) if kind == "loop"
                            else trial_verdict(run, step, refused))
            text = None
            if not why and kind == "loop":
                text = canonical(run, step)
                why = "" if text is not None else NOT_CANONICAL
            if why:
                tally.dropped[why] += 1
                continue
            if kind == "loop":
                messages = [*step.prompt, {"role": "assistant", "content": text}]
                tally.made["loop steps"] += 1
            else:
                messages = [*step.prompt, {"role": "assistant", "content": code_reply(step)}]
                tally.made["passing trial candidates"] += 1
            yield {"messages": messages, "source": source(run, step, kind)}


def dpo_rows(runs: list[RunLog], tally: Tally) -> Iterator[dict]:
    """Preference pairs: trials (passing vs failing candidate, same request), loop (canonical call vs raw reply)."""
    requests: dict[str, dict[str, list]] = {}
    for run in runs:
        tally.runs += 1
        whole = run_problem(run)
        refused = _job_refused(run)
        for step in run.steps:
            if step.kind == "trial":
                why = whole or trial_verdict(run, step, refused)
                if whole:
                    tally.dropped[whole] += 1
                if why in ("", FAILED) and step.prompt and "not run: the time budget" not in step.observation:
                    side = "fail" if why else "pass"
                    requests.setdefault(step.prompt[0]["content"], {"pass": [], "fail": []})[side].append((run, step))
            elif step.kind == "loop":
                row = _loop_pair(run, step, whole, tally)
                if row is not None:
                    yield row
    for sides in requests.values():
        passing = _distinct(sides["pass"])
        failing = _distinct(sides["fail"])
        if not passing or not failing:
            tally.dropped["trial candidate with nothing to pair (no pass or no fail for its request)"] += len(failing)
            continue
        for n, (run, step) in enumerate(failing):
            good_run, good = passing[n % len(passing)]
            tally.made["trial pairs"] += 1
            yield {"prompt": good.prompt, "chosen": [{"role": "assistant", "content": code_reply(good)}],
                   "rejected": [{"role": "assistant", "content": code_reply(step)}],
                   "source": source(good_run, good, "trial", rejected=(run, step))}


def _loop_pair(run: RunLog, step: Step, whole: str, tally: Tally) -> dict | None:
    kinds = [str(i.get("kind", "")) for i in step.interventions]
    mended = any(k.startswith(REPAIRED) and k != "repair.prefill" for k in kinds)
    why = whole or step_problem(step) or ("" if mended else "reply already canonical")
    text = canonical(run, step) if not why else None
    why = why or ("" if text is not None else NOT_CANONICAL)
    if not why and text.strip() == step.reply.strip():
        why = "reply already canonical"
    if why:
        tally.dropped[why] += 1
        return None
    tally.made["loop repairs"] += 1
    return {"prompt": step.prompt, "chosen": [{"role": "assistant", "content": text}],
            "rejected": [{"role": "assistant", "content": step.reply}],
            "source": source(run, step, "loop", rejected=(run, step))}


def _distinct(found: list[tuple[RunLog, Step]]) -> list[tuple[RunLog, Step]]:
    """One (run, step) per distinct reply as an example shows it."""
    seen: dict[str, tuple[RunLog, Step]] = {}
    for run, step in found:
        seen.setdefault(code_reply(step), (run, step))
    return list(seen.values())


def _job_refused(run: RunLog) -> bool:
    """True when the trials' passing candidate went to the job's acceptance rule and was refused there (the trials
    names what passed, but the run did not count the pass)."""
    return False if run.end is None else bool((run.end.get("trials") or {}).get("passed_by")) and \
        "trials.pass" not in (run.end.get("interventions") or {})


def write_rows(rows: Iterator[dict], out: Path) -> int:
    """Write rows as JSONL, every string redacted; returns how many (the file is replaced only when all are written)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    count = 0
    with partial.open("w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(redact_data(row), ensure_ascii=False) + "\n")
            count += 1
    partial.replace(out)
    return count
