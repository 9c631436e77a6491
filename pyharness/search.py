"""search: sampled candidates, checked in a scratch copy, and the tests choose (the harness layer `search`).

Every pass a 1.5B model made inside the loop was a first-try pass: shown its failed attempt, it sends the
same code back. So after a failed first attempt the harness does not argue with the model; it asks again
in a fresh context (the task, the best code so far, its ONE failure; older attempts one line each), with
framings and temperatures spread by a schedule, runs each candidate's check in a scratch copy of the
workspace (never the user's tree), and keeps the best: all pass > more checks passed > fewer failures >
fewer errors. A candidate is only ever kept when it beats the code before it.
"""

import hashlib
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from actions.base import Observation
from pyharness.agree import choose, probe_calls, seed_calls
from pyharness.candidates import AddTarget, Attempt, Framing, StdoutTarget, extract_code, parse_schedule, VOTES
from pyharness.cloze import ClozeRounds
from pyharness.suspects import FixTarget
from pyharness.errors import ActionError, Done, LimitsExceeded
from pyharness.harness.imports import undefined_names, with_stdlib_imports
from pyharness.harness.lint import empty_functions
from pyharness.harness.parse import first_fence
from pyharness.models.base import ChatOptions, Reply
from pyharness.verdicts import Verdict, check_in_scratch, one_line

if TYPE_CHECKING:
    from pyharness.agent import Agent

DEFAULT_SCHEDULE = "plain@0,plain@0.8,repair@0.5,plan@0.6,plain@1.0,repair@0.8,plan@0.9,plain@0.9"
"""The order candidates are asked for in (kind@temperature); the first is the greedy plain request (what the model
alone is asked). On the dev tasks (stdout tasks outside slice20) every pass after the first came from a sample, and a
greedy repair straight after the greedy attempt sent the same code back, so repairs come later and warmer."""
FIX_SCHEDULE = "plain@0,line@0,plain@0.8,line@0.7,repair@0.5,plan@0.6,plain@1.0,repair@0.8"
"""fix mode also asks for the wrong line in words (`line`): in the loop, a 1.5B model named the right line in prose
more often than it rewrote the function right."""
PRESETS: dict[str, dict[str, str]] = {
    "default": {},
    "spec": {"fix": "plain@0,line@0,spec@0,line@0.7,spec@0.7,repair@0.5,spec@1.0,plan@0.6"},
    "guesses": {"fix": "plain@0,guesses@0,plain@0.8,guesses@0.7,repair@0.5,plan@0.6,plain@1.0,guesses@1.0"},
    "vote": {"stdout": DEFAULT_SCHEDULE + ",vote@0.8,vote@0.8,vote@1.0,vote@1.0"},
    "doubt": {"stdout": DEFAULT_SCHEDULE + ",confirm@0.8,confirm@0.8,confirm@1.0,confirm@1.0"},
    "long": {"fix": FIX_SCHEDULE + ",plain@0.9,line@1.0,repair@0.7,plan@0.8,plain@1.1,line@0.8,repair@1.0,plain@0.6"},
}
"""Named schedules per mode, for `ph eval --configs schedule=default,spec` (a mode a preset leaves out keeps its
default): a schedule change is measured against the current one in one interleaved run. `long` asks fix mode for
16 candidates: on real projects' mutants most runs ended with the 8-candidate schedule spent and half the time budget
left (the step budget must allow 16 too)."""
CLOZE_SCHEDULE = "cloze@0.8,cloze@0.8,plain@0,cloze@0.8,line@0,cloze@0.8,cloze@0.8,plain@0.8,cloze@0.8,repair@0.5"
"""fix mode's schedule with the harness layer `cloze` (`pyharness.cloze`: a suspect statement masked and filled,
SAMPLES fills a round, one step): a round costs a fraction of a whole-function candidate on real code and cannot copy
the bug, so the two best-ranked statements go first; the whole-function framings stay for bugs of more than a line.
Without the layer, or with a model that has no fill-in-the-middle, fix mode asks FIX_SCHEDULE (a schedule that names
cloze rounds asks such a model in chat: `cloze.sample_hole`)."""
STOP = ["<|im_end|>", "<|endoftext|>"]


@dataclass
class Candidate:
    """A candidate: where it came from, the code the model wrote, the files it makes, and its verdict."""

    origin: str
    code: str = ""
    files: dict[str, str] = field(default_factory=dict)
    verdict: Verdict = field(default_factory=lambda: Verdict(False, failure="nothing was tried yet"))
    number: int = 0
    """Which distinct candidate run this code was (1: the first); 0 when it was not run."""
    imports: dict[str, list[str]] = field(default_factory=dict)
    """The standard-library imports the harness added before the check, by file (layer `stdimports`)."""


class Search:
    """Runs the schedule for one job until a candidate passes or a budget ends it."""

    def __init__(self, agent: "Agent", schedule: str | None = None):
        self.agent, self.ctx, self.job = agent, agent.ctx, agent.job
        self.ws = agent.ctx.workspace
        self.schedule = parse_schedule(schedule or self.default_schedule(self.job.mode, agent.harness, agent.model))
        self.seen: dict[str, Candidate] = {}
        self.probe_list: list[str] | None = None
        self.behaviours: dict[str, tuple[str, ...] | None] = {}
        """Each passing candidate's results on the probe calls, by its code (worked out once for confirm and vote)."""
        self.counts = {"sample": 0, "repair": 0, "line": 0}
        self.cloze: ClozeRounds | None = None
        self.record = {"candidates": 0, "run": 0, "duplicates": 0, "passed_by": "", "seconds": 0.0, "tokens": 0,
                       "attempts": [], "imports_added": {}}

    @staticmethod
    def default_schedule(mode: str, harness, model) -> str:
        """The mode's schedule: fix mode's with cloze rounds when the layer `cloze` is on and the model fills holes
        natively (asked in chat, the probe's model restored 1 masked line of 15, natively 6 greedy)."""
        if mode != "fix":
            return DEFAULT_SCHEDULE
        return CLOZE_SCHEDULE if harness.on("cloze") and getattr(model, "fim", False) else FIX_SCHEDULE

    @staticmethod
    def applies(job, ws) -> bool:
        """stdout and fix jobs always; add jobs whose task names the new file and its function."""
        return job.mode in ("stdout", "fix") or job.mode == "add" and AddTarget.parse(ws, job.task) is not None

    def run(self) -> str:
        """Search; raises Done (a candidate passed and the job accepted it) or LimitsExceeded (a budget ran out),
        else returns what the loop is told next (the schedule ran out with budget left: the loop goes on from the
        best state, with its one failure; '' when the search declined the job)."""
        started = time.monotonic()
        target = self.target = self._target()
        shown, stop = None, ""
        try:
            if isinstance(target, AddTarget) and not target.test and not self._model_test(target):
                self.agent._count("search.declined", "no usable test for the new code: the loop goes on")
                return ""
            before = self.before = self._before(target)
            history: list[tuple[Candidate, str]] = []
            greens: list[Candidate] = []
            voting = bool(self._probes(target))
            for n, framing in enumerate(self.schedule):
                if (framing.kind in VOTES) != bool(greens):
                    continue  # votes are asked only once a candidate passes, and then nothing else is
                stop = self._out_of_budget()
                if stop:
                    break
                asked = self._framing(framing, shown)
                if asked.kind == "cloze":
                    candidate = self._cloze(asked)
                    if candidate is None:
                        continue  # no suspect statement left to mask: the schedule goes on without it
                else:
                    candidate = self._candidate(target, asked, shown, history)
                if candidate.verdict.green:
                    greens.append(candidate)
                    shown = greens[0]
                    if not voting or not any(f.kind in VOTES for f in self.schedule[n + 1:]):
                        break
                    if framing.kind == "confirm" and self._unanimous(target, greens):
                        break
                    continue
                if candidate.code:
                    history.append((candidate, f"attempt {len(history) + 1}: {one_line(candidate.verdict.failure)}"))
                    if shown is None or candidate.verdict.rank >= shown.verdict.rank:
                        shown = candidate  # the one a repair shows: the best attempt, the latest among equals
            if len(greens) > 1:
                shown = self._agree(target, greens)
            stop = stop or self._out_of_budget()  # the last framing may have spent the budget: no loop turn is left
        finally:
            self.record["seconds"] = round(time.monotonic() - started, 2)
            self.agent.result.search = self.record
        return self._finish(shown, before, stop)

    def _probes(self, target) -> list[str]:
        """Probe calls for choosing among passing candidates by agreement (function tasks only; else none)."""
        if not isinstance(target, StdoutTarget) or not target.function:
            return []
        if self.probe_list is None:
            self.probe_list = probe_calls(seed_calls(self.job.task, target.checks))
        return self.probe_list

    def _unanimous(self, target, greens: list[Candidate]) -> bool:
        """Two or more passing candidates, all alike on the probe calls (each one's results worked out once)."""
        if len(greens) < 2 or not self._probes(target):
            return False
        choose([c.code for c in greens], self._probes(target), self.behaviours)  # fills in the behaviours
        seen = {self.behaviours[c.code] for c in greens}
        return len(seen) == 1 and None not in seen

    def _agree(self, target, greens: list[Candidate]) -> Candidate:
        """The passing candidate whose results on the probe calls the most passing candidates share."""
        index, support = choose([c.code for c in greens], self._probes(target), self.behaviours)
        self.record["vote"] = {"passing": len(greens), "probes": len(self._probes(target)), "support": support,
                               "chosen": greens[index].origin}
        self.agent._count("search.vote", f"{greens[index].origin}: {support} of {len(greens)} passing agree")
        return greens[index]

    def _cloze(self, framing: Framing) -> Candidate | None:
        """One round of the cloze framing (`pyharness.cloze`); None when no suspect statement is left to mask."""
        if self.cloze is None:
            self.cloze = ClozeRounds(self)
        best, said = self.cloze.next(framing.temperature)
        if best is None and not said:
            return None
        return best or Candidate(f"cloze {len(self.cloze.rounds)}", verdict=Verdict(False, failure=said))

    def _framing(self, framing: Framing, shown: Candidate | None) -> Framing:
        """A repair needs an attempt to show (before there is one it is a plain request); `line`, `guesses` and
        `cloze` are for fix (`cloze` with its layer on)."""
        fix_only = (framing.kind in ("line", "guesses", "cloze") and self.job.mode != "fix"
                    or framing.kind == "cloze" and not self.agent.harness.on("cloze"))
        if framing.kind == "repair" and shown is None or fix_only or framing.kind in VOTES:
            return Framing("plain", framing.temperature)
        return framing

    def _before(self, target) -> Candidate:
        """The code as it is: what every kept candidate must beat (stdout with no main.py: nothing at all)."""
        if self.job.mode == "stdout" and not (self.ws.root / "main.py").is_file():
            return Candidate("before", verdict=Verdict(False, passed=-1, failures=1, failure="no main.py"))
        if isinstance(target, AddTarget):  # the new test belongs to every candidate, and to the code before too
            return Candidate("before", verdict=self._check(target, {target.test_path: target.test}))
        self.ws.emit("phase", name="checking the code as it is")
        return Candidate("before", verdict=self._check(target, {}))

    def _model_test(self, target: AddTarget) -> bool:
        """The task states no example the harness can read: the model writes the test (once, greedy)."""
        self.agent.result.steps += 1
        reply = self._ask(target.test_request(), 0.0, "a test for the new code")
        target.test = target.adopt_test(extract_code(reply.text) or "")
        said = f"the test for the new code: {target.test_path}" if target.test else \
            f"no usable test (it must import {target.module} and define test functions): the loop goes on"
        self._record_turn(target.test_request(), reply, {"origin": "test", "framing": "test", "temperature": 0},
                          {"name": "test", "args": {"path": target.test_path}}, Observation(said, ok=bool(target.test)))
        return bool(target.test)

    def _target(self) -> StdoutTarget | FixTarget | AddTarget:
        if self.job.mode == "stdout":
            return StdoutTarget(self.job.task)
        if self.job.mode == "add":
            target = AddTarget.parse(self.ws, self.job.task)
            assert target is not None
            return target
        first = self.job.first_run
        assert first is not None
        return FixTarget(self.ws, self.job.failing_before[0], first.error_line(), first.first_traceback,
                         getattr(self.job, "trace", None))

    def _out_of_budget(self) -> str:
        """Why no further candidate may be asked for ('' while the budgets allow one)."""
        config = self.agent.config
        if self.agent.result.steps >= config.max_steps:
            return f"step budget of {config.max_steps} used up"
        if self.agent._out_of_time():
            return f"time budget of {config.max_seconds:.0f} s used up"
        return ""

    def _candidate(self, target, framing: Framing, shown: Candidate | None,
                   history: list[tuple[Candidate, str]]) -> Candidate:
        """Ask for one candidate, check it in a scratch copy (once per distinct code), record it."""
        agent = self.agent
        agent.result.steps += 1
        kind = {"repair": "repair", "line": "line", "guesses": "line"}.get(framing.kind, "sample")
        origin = "greedy" if not self.record["candidates"] else f"{kind} {self.counts[kind] + 1}"
        self.counts[kind] += 0 if origin == "greedy" else 1
        attempt = Attempt(shown.code, shown.verdict.failure) if shown is not None else None
        message = target.message(framing, attempt, [line for tried, line in history if tried is not shown])
        reply = self._ask(message, framing.temperature, f"candidate {origin}")
        self.record["candidates"] += 1
        agent._count("search.candidate", f"{origin} ({framing.kind}, temperature {framing.temperature:g})")
        codes = target.extract_all(reply.text, framing, self.ws)
        tried = []
        for n, code in enumerate(codes or [None]):
            tried.append(self._judge(target, origin if n == 0 else f"{origin}.{n + 1}", code))
            if tried[-1].verdict.green:
                break
        candidate = max(tried, key=lambda c: c.verdict.rank)  # the first among equals
        how = {"origin": origin, "framing": framing.kind, "temperature": framing.temperature}
        if candidate.imports:
            how["imports_added"] = candidate.imports
        text = "\n".join(f"{c.origin}: " + ("all checks pass" if c.verdict.green else c.verdict.failure)
                         for c in tried)
        self._record_turn(message, reply, how, {"name": "candidate", "args": {"files": sorted(candidate.files)}},
                          Observation(text, ok=candidate.verdict.green))
        return candidate

    def _judge(self, target, origin: str, code: str | None, files: dict[str, str] | None = None) -> Candidate:
        """Check one candidate's code in a scratch copy (once per distinct code) and say what came of it; `files`,
        when given, are the candidate's files as they are (a cloze fill: the whole file)."""
        agent = self.agent
        candidate = Candidate(origin, code or "")
        if agent._out_of_time():
            candidate.verdict = Verdict(False, failure="not run: the time budget ended this reply")
        elif code is None:
            candidate.verdict = Verdict(False, failure="the reply held no code block")
        else:
            key = hashlib.sha256(code.strip().encode()).hexdigest()
            if key in self.seen:
                self.record["duplicates"] += 1
                agent._count("search.duplicate", f"same code as {self.seen[key].origin}")
                candidate.verdict, candidate.files = self.seen[key].verdict, self.seen[key].files
                candidate.number, candidate.code = self.seen[key].number, self.seen[key].code
                candidate.imports = self.seen[key].imports
            else:
                candidate.code, candidate.files, candidate.imports = (
                    (code, files, {}) if files is not None else self._apply(target, code))
                if candidate.imports:
                    self.record["imports_added"][origin] = candidate.imports
                    agent._count("search.imports", "; ".join(line for lines in candidate.imports.values()
                                                             for line in lines))
                self.ws.emit("phase", name=f"checking candidate {origin}")
                candidate.verdict = self._verdict(target, code, candidate.files)
                self.seen[key] = candidate
                self.record["run"] += 1
                self.agent.result.attempts += 1
                candidate.number = self.record["run"]
        self.record["attempts"].append(f"{origin}: " + ("pass" if candidate.verdict.green else
                                                        one_line(candidate.verdict.failure)))
        agent.emit("observation", observation=Observation(f"{origin}: " + (
            "all checks pass" if candidate.verdict.green else candidate.verdict.failure), ok=candidate.verdict.green),
                   interventions=list(agent._notes))
        return candidate

    def _apply(self, target, code: str) -> tuple[str, dict[str, str], dict[str, list[str]]]:
        """The candidate's code, its files, and the imports added to them: with the layer `stdimports`, those its
        undefined standard-library names need, before any check (a whole-file candidate, stdout's main.py or add's
        new file, in its code; fix mode's functions at the top of the file they are merged into, for the names the
        file as it is does not already lack)."""
        if not self.agent.harness.on("stdimports"):
            return code, target.apply(code, self.ws), {}
        if not isinstance(target, FixTarget):
            code, added = with_stdlib_imports(code)
            return code, target.apply(code, self.ws), {getattr(target, "path", "main.py"): added} if added else {}
        files, imports = target.apply(code, self.ws), {}
        for rel, text in files.items():
            lacking = self.ws.cache.derive(self.ws.root / rel, "undefined", undefined_names)  # once per version
            files[rel], added = with_stdlib_imports(text, skip=lacking or ())
            if added:
                imports[rel] = added
        return code, files, imports

    def _record_turn(self, message: str, reply: Reply, search: dict, action: dict, observation: Observation) -> None:
        """One transcript record per model call, in the fields of the loop's turns (so `ph show` reads both)."""
        agent = self.agent
        agent.transcript.turn(agent.result.steps, [{"role": "user", "content": message}], reply, search=search,
                              action=action, interventions=[vars(i) for i in agent._notes],
                              observation=observation.text, ok=observation.ok)
        agent._notes = []

    def _ask(self, message: str, temperature: float, purpose: str = "") -> Reply:
        """One plain chat call (one user message, code back), counted in the run's and the search's tokens."""
        agent = self.agent
        agent.emit("thinking", step=agent.result.steps, purpose=purpose)
        reply = agent.model.chat([{"role": "user", "content": message}], ChatOptions(
            stop=STOP, max_tokens=agent.config.max_tokens, temperature=temperature, seed=agent.result.steps,
            on_text=lambda piece: agent.emit("token", text=piece),
            should_stop=lambda text: agent._out_of_time() or first_block_closed(text)))
        agent.emit("reply", reply=reply)
        for name in ("prompt_tokens", "cached_tokens", "completion_tokens"):
            setattr(agent.result, name, getattr(agent.result, name) + getattr(reply, name))
        self.record["tokens"] += reply.prompt_tokens - reply.cached_tokens + reply.completion_tokens
        return reply

    def _verdict(self, target, code: str, files: dict[str, str]) -> Verdict:
        if files and all((self.ws.root / rel).is_file() and self.ws.read_text(rel) == text
                         for rel, text in files.items()):
            was = self.before.verdict  # the same code: the same verdict, without running it again
            return Verdict(False, was.passed, was.failures, was.errors,
                           f"unchanged: the reply sends back the code as it is, which fails: {was.failure}")
        if not files:
            names = ", ".join(u.name for u in getattr(target, "units", [])) or "the suspect function"
            return Verdict(False, failure=f"the reply did not contain {names} (reply with the whole function)")
        empty = [name for text in files.values() for name in empty_functions(text)]
        if empty:
            return Verdict(False, failure=f"{', '.join(empty)} has no body (only a docstring or pass)")
        return self._check(target, files)

    def _check(self, target, files: dict[str, str]) -> Verdict:
        """Apply `files` in a fresh scratch copy of the workspace and run the mode's check there."""
        return check_in_scratch(self.ws, self.job, self.ctx, target, files)

    def _finish(self, best: Candidate | None, before: Candidate, stop: str) -> str:
        """Write the best candidate into the workspace if it beats the code before; a passing one goes to the
        job's acceptance rule. Without a pass, a spent budget (`stop`) ends the run; else the loop is told where
        things stand."""
        kept = best is not None and best.verdict.rank > before.verdict.rank
        if kept:
            for rel, text in best.files.items():
                if not (self.ws.root / rel).is_file() or self.ws.read_text(rel) != text:  # a file sent back as it
                    try:                                                                    # was is not a change
                        self.ws.write_text(rel, text)
                    except ActionError as err:  # a write limit: the run stops, saying so, with the tree as it was
                        raise LimitsExceeded(f"{stop or 'search'}; search: {best.origin} could not be written: "
                                             f"{err}") from None
        if kept and best.verdict.accepted:
            self._accept(best)
        said = (f"no candidate passed, kept the best ({best.origin}; {self._summary()})" if kept else
                f"no candidate beat the code as it was ({self._summary()})")
        if stop:
            raise LimitsExceeded(f"{stop}; search: {said}")
        now = best if kept else before
        self.record["handoff"] = now.origin
        self.agent._count("search.handoff", f"the schedule ran out ({said}): the loop goes on")
        where = (f"The best of them ({now.origin}) is now in {', '.join(sorted(now.files))}." if kept else
                 "None beat the code as it was, which is unchanged.")
        return (f"(The harness tried {self.record['run']} candidate(s) in scratch copies; none passed all checks. "
                f"{where} What still fails:\n{now.verdict.failure}\nGo on from here, one action a turn.)")

    def _accept(self, best: Candidate) -> None:
        """A passing candidate is in the workspace: the job's acceptance rule decides (raises Done or
        LimitsExceeded)."""
        self.record["passed_by"] = best.origin
        self.agent.result.first_pass = best.number or self.record["run"]
        try:
            verdict = self.job.accept(Observation("", final=True), self.ws, self.ctx)
        except ActionError as err:
            raise LimitsExceeded(f"search: {best.origin} passed its check but not the job's: {err}") from None
        self.agent._count("search.pass", best.origin)
        doubt = "" if best.verdict.green else f"; still failing, an example read from the task text: " \
            f"{best.verdict.failure.splitlines()[0]}"
        raise Done(f"{verdict} (search: {best.origin}, candidate {self.record['candidates']}{doubt})")

    def _summary(self) -> str:
        r = self.record
        return f"{r['candidates']} candidate(s), {r['run']} run"


def first_block_closed(text: str) -> bool:
    """True once the reply holds a closed ``` block (the code; what follows is explanation)."""
    return first_fence(text, closed_only=True) is not None
