"""`ph distill`: Harness-Aware Distillation. The suite runs as `ph eval` runs it (`evals.run_eval`, one configuration,
harness on) with the student in the loop; after each run, every loop step the student was asked is put to the teacher
twice, with the prompt the student had and with the harness's additions taken out of it. A step is kept when the
teacher's two actions differ (what the harness supplied changed the teacher's action: that, and only that, is worth
teaching a model that will run inside the harness) and the harness record does not contradict the with-harness action;
it becomes an SFT example, that prompt -> the teacher's action in its canonical form.

"Without the harness's additions" is the same messages, system prompt and replies unchanged, with the text the harness
adds on its own initiative cut out of the user messages (`bare`); each part is fixed text ph writes:
- steering hints: the `Hint: ...` the loop and context layers append to an observation;
- the test run after a change (`Tests after this change: ...`, with the acceptance note after it);
- the one traceback: what follows a `First failing test:` line (the counts and the test's name stay), in the fix task,
  an observation or a refused done;
- fault localisation and traced values: the fix task's `NAME is defined in PATH (lines a-b):` listings (the code the
  failing test ran, lines marked as run, condition values seen);
- the trials' hand-off paragraph `(The harness tried N candidate(s) ...)` with its failure.
A prompt with none of them is not put to the teacher (it would be asked the same thing twice).

Trial requests are not asked: their whole prompt is the harness's, so there is no without-harness version of it
(their passing candidates are `ph export sft` data). The teacher is asked after the run, so its time never counts
against the student's budgets; it answers greedily (temperature 0), with the run's stop sequences and token limit.

The record contradicts the teacher's with-harness action when the run does not count (invalid, undone, unfinished),
when that action is the call the student made at that step and the harness refused it (or the loop layer flagged it),
or when, in fix mode, it changes a test file.
"""

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from pyharness.evals.runner import EvalPlan, Models, run_eval
from pyharness.export.canonical import canonical_reply, read_call, same_args
from pyharness.export.runlog import RunLog, Step, read_runs
from pyharness.export.training import run_problem, source, step_problem
from pyharness.harness.pipeline import CHANGES, HarnessConfig, Pipeline
from pyharness.loop.jobs import Job
from pyharness.loop.session import offered
from pyharness.models.base import ChatOptions, Model
from pyharness.models.retry import chat_with_retries
from pyharness.workspace.redact import redact, redact_data
from pyharness.workspace.tree import Workspace

LISTING = r"[\w.]+ is defined in \S+ \(lines \d+-\d+\):\n"
"""The head of a fix task's listing of a function the failing test ran (`jobs.related_source`)."""
ADDITIONS: tuple[tuple[str, re.Pattern[str], str], ...] = (
    ("handoff", re.compile(r"\n\n\(The harness tried \d+ candidate\(s\) in scratch copies.*\Z", re.S), ""),
    ("hint", re.compile(r"\n\nHint: .*\Z", re.S), ""),
    ("autotest", re.compile(r"\nTests after this change: .*\Z", re.S), ""),
    ("localisation", re.compile(rf"^{LISTING}.*?\n\n(?={LISTING}|Repository files:)", re.S | re.M), ""),
    ("traceback", re.compile(r"^(First failing test: [^\n]*)(?:\n.*?)??(?=\n\nRepository files:|\Z)", re.S | re.M),
     r"\1"),
)
NO_ADDITIONS, SAME = "no harness additions in the prompt", "same action with and without them"
TEACHER_NO_ACTION, UNMATCHED = "teacher's with-harness reply held no valid action", "no matching model call"
REFUSED_CALL, TEST_FILE = "contradicted: the harness refused this call", "contradicted: changes a test file"


def bare(messages: list[dict]) -> list[dict]:
    """The messages without the harness's additions (see the module docstring), in order."""
    out = []
    for message in messages:
        content = message.get("content", "")
        if message.get("role") == "user" and isinstance(content, str):
            for _, pattern, replacement in ADDITIONS:
                content = pattern.sub(replacement, content)
        out.append({**message, "content": content})
    return out


@dataclass
class Asked:
    """One loop call of the student: the prompt as given, its reply, and the options the teacher is asked with."""

    messages: list[dict]
    reply: str
    stop: list[str]
    max_tokens: int
    seed: int
    schema: dict | None


class StudentTap:
    """The student as the run sees it: every call passes through unchanged, and each loop call is written down."""

    def __init__(self, student: Model, log: list[Asked]):
        self.student, self.log = student, log

    def __getattr__(self, name: str):
        student = self.__dict__.get("student")
        if student is None:
            raise AttributeError(name)
        return getattr(student, name)

    def chat(self, messages: list[dict], options: ChatOptions):
        """The student's reply; a loop call (system prompt first, no prefill) is logged with a copy of its prompt."""
        reply = self.student.chat(messages, options)
        if messages and messages[0].get("role") == "system" and not options.prefix:
            self.log.append(Asked([dict(m) for m in messages], reply.text, list(options.stop), options.max_tokens,
                                  options.seed, options.schema))
        return reply


@dataclass
class DistillSummary:
    """What a distill run saw, kept and left out."""

    runs: int = 0
    steps: int = 0
    """Loop steps of the student."""
    trial_calls: int = 0
    """Trial requests (not put to the teacher)."""
    kept: int = 0
    teacher_calls: int = 0
    dropped: Counter = field(default_factory=Counter)

    def lines(self) -> list[str]:
        """The summary as the command prints it."""
        out = [f"{self.kept} of {self.steps} loop step(s) kept from {self.runs} run(s); {self.teacher_calls} teacher "
               f"call(s); {self.trial_calls} trial request(s) not asked"]
        if self.dropped:
            out.append("left out: " + ", ".join(f"{n} {why}" for why, n in self.dropped.most_common()))
        return out

    def as_dict(self) -> dict:
        """The summary as distill.json holds it."""
        return {"runs": self.runs, "steps_seen": self.steps, "kept": self.kept, "teacher_calls": self.teacher_calls,
                "trial_requests_not_asked": self.trial_calls, "dropped": dict(self.dropped.most_common())}


class Distiller:
    """Puts each finished run's loop steps to the teacher and appends the kept ones to the SFT file."""

    def __init__(self, teacher: Model, log: list[Asked], sft: Path, retries: int = 3):
        self.teacher, self.log, self.sft, self.retries = teacher, log, sft, retries
        self.summary = DistillSummary()

    def after_run(self, transcript: Path) -> list[dict]:
        """Judge the steps of the run whose transcript this is (the calls logged since the last run); append and
        return the kept examples."""
        asked, self.log[:] = list(self.log), []
        runs, _ = read_runs([transcript]) if transcript.is_file() else ([], [])
        if not runs:
            return []
        run, rows, start = runs[0], [], 0
        self.summary.runs += 1
        self.summary.trial_calls += sum(s.kind == "trial" for s in run.steps)
        for step in (s for s in run.steps if s.kind == "loop"):
            self.summary.steps += 1
            match = next((n for n in range(start, len(asked)) if redact(asked[n].reply) == step.reply), None)
            if match is None:
                self.summary.dropped[UNMATCHED] += 1
                continue
            start = match + 1
            why, text = self._judge(run, step, asked[match])
            if why:
                self.summary.dropped[why] += 1
                continue
            self.summary.kept += 1
            rows.append({"messages": [*asked[match].messages, {"role": "assistant", "content": text}],
                         "source": {**source(run, step, "distill"), "teacher": self.teacher.name}})
        if rows:
            with self.sft.open("a", encoding="utf-8") as f:
                for row in rows:
                    f.write(json.dumps(redact_data(row), ensure_ascii=False) + "\n")
        return rows

    def _judge(self, run: RunLog, step: Step, asked: Asked) -> tuple[str, str]:
        """('', the teacher's canonical with-harness action) for a kept step, else (why it is left out, '')."""
        whole = run_problem(run)
        if whole:
            return whole, ""
        plain = bare(asked.messages)
        if plain == asked.messages:
            return NO_ADDITIONS, ""
        actions = offered(Job(mode=run.mode, task=run.task), HarnessConfig())
        write_path = "main.py" if run.mode == "stdout" else None
        calls = []
        for messages in (asked.messages, plain):
            reply = self._ask(messages, asked, actions)
            calls.append(read_call(reply.text, actions, json_protocol=run.json_protocol, default_write_path=write_path,
                                   truncated=reply.finish_reason == "length"))
        with_harness, without = calls
        if with_harness is None:
            return TEACHER_NO_ACTION, ""
        name, args, _ = with_harness
        if without is not None and without[0] == name and same_args(without[1], args):
            return SAME, ""
        student = step.action or {}
        if student.get("name") == name and same_args(student.get("args") or {}, args) and step_problem(step):
            return REFUSED_CALL, ""
        path = args.get("path")
        if run.mode == "fix" and name in CHANGES and isinstance(path, str) and \
                Workspace(Path(run.repo or ".")).is_test_path(path.removeprefix("./")):
            return TEST_FILE, ""
        return "", canonical_reply(name, args, actions, json_protocol=run.json_protocol)

    def _ask(self, messages: list[dict], asked: Asked, actions):
        """One greedy teacher reply, ended like the loop's: at the stop sequences or one complete action."""
        pipeline = Pipeline(actions, HarnessConfig())
        options = ChatOptions(stop=asked.stop, max_tokens=asked.max_tokens, temperature=0.0, seed=asked.seed,
                              schema=asked.schema, should_stop=None if asked.schema else pipeline.complete)
        if not self.teacher.loaded:
            self.teacher.load()
        self.summary.teacher_calls += 1
        return chat_with_retries(self.teacher, messages, options, attempts=self.retries)


def run_distill(plan: EvalPlan, out: Path, models: Models, distiller: Distiller, on_run=lambda record, rows: None):
    """Run the plan (one worker: the logged calls belong to the run that just ended) and distil each run as it ends."""

    def ended(record: dict, done: int, total: int) -> None:
        rows = distiller.after_run(out / record["transcript"]) if record.get("transcript") else []
        distiller.log[:] = []  # a run with no transcript (a set-up error) leaves no calls to a later one
        on_run(record, rows)

    distiller.sft.write_text("", encoding="utf-8")
    run_eval(plan, out, models, workers=1, on_result=ended)
    (out / "distill.json").write_text(json.dumps(distiller.summary.as_dict(), indent=1) + "\n", encoding="utf-8")
    return distiller.summary
