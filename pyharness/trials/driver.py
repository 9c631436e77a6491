"""One job's trials (the harness layer `trials`): sampled candidates, checked in a scratch copy, and the tests choose.

Every pass a small model made inside the loop was a first-try pass: shown its failed attempt, it sends the same code
back. So after a failed first attempt the harness does not argue with the model; it asks again in a fresh context
(the task, the best code so far, its ONE failure; older attempts one line each), with framings and temperatures
spread by a schedule, runs each candidate's check in a scratch copy of the workspace (never the user's tree), and
keeps the best: all pass > more checks passed > fewer failures > fewer errors. A candidate is only ever kept when it
beats the code before it.
"""

import time

from pyharness.actions.base import Observation
from pyharness.errors import ActionError, Done, LimitsExceeded
from pyharness.harness.parse import first_fence
from pyharness.models.base import END_OF_TURN, ChatOptions, Reply
from pyharness.trials.agree import choose, probe_calls, seed_calls
from pyharness.trials.brief import Brief, JobView, TrialsRecord
from pyharness.trials.candidates import VOTES, AddTarget, Framing, StdoutTarget, extract_code, parse_schedule
from pyharness.trials.cloze import ClozeRounds
from pyharness.trials.judge import Candidate, Judge, Target
from pyharness.trials.prompts import Attempt, handoff
from pyharness.trials.schedule import default_schedule
from pyharness.trials.suspects import FixTarget
from pyharness.trials.verdicts import UNMEASURED, Verdict, one_line
from pyharness.workspace.failpoints import progress
from pyharness.workspace.tree import Workspace


class Trials:
    """Runs the schedule for one job until a candidate passes or a budget ends it."""

    def __init__(self, brief: Brief, schedule: str | None = None):
        self.brief, self.state, self.job, self.ws = brief, brief.state, brief.job, brief.ws
        self.schedule = parse_schedule(schedule or default_schedule(self.job.mode, brief.harness, brief.model))
        self.probe_list: list[str] | None = None
        self.behaviours: dict[str, tuple[str, ...] | None] = {}
        """Each passing candidate's results on the probe calls, by its code (worked out once for confirm and vote)."""
        self.counts = {"sample": 0, "repair": 0, "line": 0}
        self.cloze: ClozeRounds | None = None
        self.record = TrialsRecord()
        self.judge = Judge(brief, self.record)
        self.target: Target = self._target()

    @staticmethod
    def applies(job: JobView, ws: Workspace) -> bool:
        """stdout and fix jobs always; add jobs whose task names the new file and its function."""
        return job.mode in ("stdout", "fix") or job.mode == "add" and AddTarget.parse(ws, job.task) is not None

    def run(self) -> str:
        """Run the trials; raises Done (a candidate passed and the job accepted it) or LimitsExceeded (a budget ran
        out), else returns what the loop is told next (the schedule ran out with budget left: the loop goes on from
        the best state, with its one failure; '' when the trials declined the job)."""
        try:
            started = time.monotonic()
            target = self.target
            try:
                if isinstance(target, AddTarget) and not target.test and not self._model_test(target):
                    self.state.count("trials.declined", "no usable test for the new code: the loop goes on")
                    return ""
                self.judge.before = self.judge.before_of(target)
                shown, stop = self._through_schedule()
            finally:
                self.record.seconds = round(time.monotonic() - started, 2)
            return self._finish(shown, stop)
        finally:
            self.state.result.trials = self.record.as_dict()

    def _through_schedule(self) -> tuple[Candidate | None, str]:
        """Ask for the schedule's candidates in turn until one passes (or the votes after it are in) or the budget
        is spent: the candidate to keep or show, and why the budget stopped it ('' when it did not). The target is
        read anew for each (a kept partial fix changes the suspect functions' code)."""
        shown: Candidate | None = None
        stop = ""
        history: list[tuple[Candidate, str]] = []
        greens: list[Candidate] = []
        voting = bool(self._probes(self.target))
        for n, framing in enumerate(self.schedule):
            if (framing.kind in VOTES) != bool(greens):
                continue  # votes are asked only once a candidate passes, and then nothing else is
            stop = self.state.spent()
            if stop:
                break
            asked = self._framing(framing, shown)
            if asked.kind == "cloze":
                candidate = self._cloze(asked)
                if candidate is None:
                    continue  # no suspect statement left to mask: the schedule goes on without it
            else:
                candidate = self._candidate(self.target, asked, shown, history)
            if candidate.verdict.green:
                greens.append(candidate)
                shown = greens[0]
                if not voting or not any(f.kind in VOTES for f in self.schedule[n + 1:]):
                    break
                if framing.kind == "confirm" and self._unanimous(self.target, greens):
                    break
                continue
            if candidate.code:
                history.append((candidate, f"attempt {len(history) + 1}: {one_line(candidate.verdict.failure)}"))
                if shown is None or candidate.verdict.rank >= shown.verdict.rank:
                    shown = candidate  # the one a repair shows: the best attempt, the latest among equals
        if len(greens) > 1:
            shown = self._agree(self.target, greens)
        return shown, stop or self.state.spent()  # the last framing may have spent the budget: no loop turn is left

    def _probes(self, target: Target) -> list[str]:
        """Probe calls for choosing among passing candidates by agreement (function tasks only; else none)."""
        if not isinstance(target, StdoutTarget) or not target.function:
            return []
        if self.probe_list is None:
            self.probe_list = probe_calls(seed_calls(self.job.task, target.checks))
        return self.probe_list

    def _unanimous(self, target: Target, greens: list[Candidate]) -> bool:
        """Two or more passing candidates, all alike on the probe calls (each one's results worked out once)."""
        if len(greens) < 2 or not self._probes(target):
            return False
        choose([c.code for c in greens], self._probes(target), self.behaviours, self.brief.ctx.python)  # fills them
        seen = {self.behaviours[c.code] for c in greens}
        return len(seen) == 1 and None not in seen

    def _agree(self, target: Target, greens: list[Candidate]) -> Candidate:
        """The passing candidate whose results on the probe calls the most passing candidates share."""
        index, support = choose([c.code for c in greens], self._probes(target), self.behaviours,
                                self.brief.ctx.python)
        self.record.vote = {"passing": len(greens), "probes": len(self._probes(target)), "support": support,
                            "chosen": greens[index].origin}
        self.state.count("trials.vote", f"{greens[index].origin}: {support} of {len(greens)} passing agree")
        return greens[index]

    def _cloze(self, framing: Framing) -> Candidate | None:
        """One round of the cloze framing (`pyharness.trials.cloze`); None when no suspect statement is left to mask."""
        if self.cloze is None:
            def check(origin: str, file: str, files: dict[str, str]) -> Candidate:
                return self.judge.candidate(self.target, origin, file, files=files)

            adopt = self._adopt if self.brief.harness.on("stacking") else None
            self.cloze = ClozeRounds(self.brief, check, self.record, adopt)
        best, said = self.cloze.next(framing.temperature)
        if best is None and not said:
            return None
        return best or Candidate(f"cloze {len(self.cloze.rounds)}", verdict=Verdict(False, failure=said))

    def _framing(self, framing: Framing, shown: Candidate | None) -> Framing:
        """A repair needs an attempt to show (before there is one it is a plain request); `line`, `guesses` and
        `cloze` are for fix (`cloze` with its layer on)."""
        fix_only = (framing.kind in ("line", "guesses", "cloze") and self.job.mode != "fix"
                    or framing.kind == "cloze" and not self.brief.harness.on("cloze"))
        if framing.kind == "repair" and shown is None or fix_only or framing.kind in VOTES:
            return Framing("plain", framing.temperature)
        return framing

    def _model_test(self, target: AddTarget) -> bool:
        """The task states no example the harness can read: the model writes the test (once, greedy)."""
        self.state.take_step()
        reply = self._ask(target.test_request(), 0.0, "a test for the new code")
        target.test = target.adopt_test(extract_code(reply.text) or "")
        said = f"the test for the new code: {target.test_path}" if target.test else \
            f"no usable test (it must import {target.module} and define test functions): the loop goes on"
        self.brief.record_turn(target.test_request(), reply, {"origin": "test", "framing": "test", "temperature": 0},
                               {"name": "test", "args": {"path": target.test_path}},
                               Observation(said, ok=bool(target.test)))
        return bool(target.test)

    def _target(self) -> Target:
        if self.job.mode == "stdout":
            return StdoutTarget(self.job.task)
        if self.job.mode == "add":
            target = AddTarget.parse(self.ws, self.job.task)
            assert target is not None
            return target
        first = self.job.first_run
        assert first is not None
        failing, error, traceback = self.job.failing_before[0], first.error_line(), first.first_traceback
        test, _, said = self.judge.before.verdict.failure.partition(" fails: ")
        if self.judge.before.origin != "before" and said and test != failing:  # a kept partial fix: what fails now
            failing, error, traceback = test, one_line(said), said
        return FixTarget(self.ws, failing, error, traceback, self.job.trace)

    def _candidate(self, target: Target, framing: Framing, shown: Candidate | None,
                   history: list[tuple[Candidate, str]]) -> Candidate:
        """Ask for one candidate, check it in a scratch copy (once per distinct code), record it."""
        self.state.take_step()
        kind = {"repair": "repair", "line": "line", "guesses": "line"}.get(framing.kind, "sample")
        origin = "greedy" if not self.record.candidates else f"{kind} {self.counts[kind] + 1}"
        self.counts[kind] += 0 if origin == "greedy" else 1
        attempt = Attempt(shown.code, shown.verdict.failure) if shown is not None else None
        message = target.message(framing, attempt, [line for tried, line in history if tried is not shown])
        reply = self._ask(message, framing.temperature, f"candidate {origin}")
        self.record.candidates += 1
        self.state.count("trials.candidate", f"{origin} ({framing.kind}, temperature {framing.temperature:g})")
        codes = target.extract_all(reply.text, framing, self.ws)
        tried = []
        for n, code in enumerate(codes or [None]):
            tried.append(self.judge.candidate(target, origin if n == 0 else f"{origin}.{n + 1}", code))
            if tried[-1].verdict.green:
                break
        candidate = max(tried, key=lambda c: c.verdict.rank)  # the first among equals
        how = {"origin": origin, "framing": framing.kind, "temperature": framing.temperature}
        if candidate.imports:
            how["imports_added"] = candidate.imports
        text = "\n".join(f"{c.origin}: " + ("all checks pass" if c.verdict.green else c.verdict.failure)
                         for c in tried)
        self.brief.record_turn(message, reply, how, {"name": "candidate", "args": {"files": sorted(candidate.files)}},
                               Observation(text, ok=candidate.verdict.green))
        return candidate

    def _ask(self, message: str, temperature: float, purpose: str = "") -> Reply:
        """One plain chat call (one user message, code back), counted in the run's and the trials' tokens."""
        brief, state = self.brief, self.state
        brief.emit("thinking", step=state.steps, purpose=purpose)
        reply = brief.model.chat([{"role": "user", "content": message}], ChatOptions(
            stop=END_OF_TURN, max_tokens=brief.max_tokens, temperature=temperature, seed=state.steps,
            on_text=lambda piece: brief.emit("token", text=piece),
            should_stop=lambda text: state.out_of_time() or first_block_closed(text)))
        brief.emit("reply", reply=reply)
        self.record.tokens += state.spend(reply)
        return reply

    def _adopt(self, candidate: Candidate) -> bool:
        """Keep a fill that makes the tests better without making them pass in the tree: it becomes the code as it
        is, which later candidates must beat and are built on, so a fix of two hunks can be found one hunk at a time
        (the layer `stacking`). Better is fewer failing tests (and no lower rank), or, with as many failing and the
        same passing in a run of the whole suite, a failing test that got further (`workspace.failpoints`) and none
        that fell back. True when it was kept."""
        base, verdict = self.judge.before.verdict, candidate.verdict
        fewer = verdict.passed != UNMEASURED and verdict.failures < base.failures and verdict.rank > base.rank
        said = f"{verdict.failures} failing where {base.failures} did"
        if not fewer:
            further, back = progress(base.points, verdict.points)
            if not further or back or self.state.out_of_time():
                return False
            whole = self.judge.check(self.target, candidate.files, whole=True)
            if whole.failures > base.failures or whole.passed < base.passed or progress(base.points, whole.points)[1]:
                return False
            candidate.verdict = whole
            at = whole.points.get(further[0]) or verdict.points[further[0]]
            said = f"{further[0]} got further (line {at.line}{', its assertion' if at.asserted else ''})"
        self._write(candidate, "trials")
        self.judge.rebase(candidate)
        if self.brief.best is not None:
            self.brief.best.measured(self.ws, candidate.verdict.failures, candidate.origin)
        self.target = self._target()
        self.record.combined = [*(self.record.combined or []), candidate.origin]
        self.state.count("trials.combined", f"{candidate.origin} kept: {said}")
        return True

    def _write(self, best: Candidate, stop: str) -> None:
        """Write a candidate's files into the workspace (a file sent back as it was is not a change)."""
        for rel, text in best.files.items():
            if not (self.ws.root / rel).is_file() or self.ws.read_text(rel) != text:
                try:
                    self.ws.write_text(rel, text)
                except ActionError as err:  # a write limit: the run stops, saying so, with the tree as it was
                    raise LimitsExceeded(f"{stop}; trials: {best.origin} could not be written: {err}") from None

    def _finish(self, best: Candidate | None, stop: str) -> str:
        """Write the best candidate into the workspace if it beats the code before (a partial fix kept on the way is
        in it already); a passing one goes to the job's acceptance rule. Without a pass, a spent budget (`stop`) ends
        the run; else the loop is told where things stand."""
        before = self.judge.before
        kept = best is not None and best.verdict.rank > before.verdict.rank
        if kept:
            self._write(best, stop or "trials")
        elif before.origin != "before":  # the kept partial fix is the best there is, and in the tree
            best, kept = before, True
        if kept and self.brief.best is not None and best.verdict.passed != UNMEASURED:  # its suite ran whole
            self.brief.best.measured(self.ws, best.verdict.failures, best.origin)
        if kept and best.verdict.accepted:
            self._accept(best)
        summary = f"{self.record.candidates} candidate(s), {self.record.run} run"
        said = (f"no candidate passed, kept the best ({best.origin}; {summary})" if kept else
                f"no candidate beat the code as it was ({summary})")
        if stop:
            raise LimitsExceeded(f"{stop}; trials: {said}")
        now = best if kept else before
        self.record.handoff = now.origin
        self.state.count("trials.handoff", f"the schedule ran out ({said}): the loop goes on")
        return handoff(self.record.run, now.origin if kept else None, sorted(now.files), now.verdict.failure)

    def _accept(self, best: Candidate) -> None:
        """A passing candidate is in the workspace: the job's acceptance rule decides (raises Done or
        LimitsExceeded)."""
        self.record.passed_by = best.origin
        self.state.result.first_pass = best.number or self.record.run
        try:
            verdict = self.job.accept(Observation("", final=True), self.ws, self.brief.ctx)
        except ActionError as err:
            raise LimitsExceeded(f"trials: {best.origin} passed its check but not the job's: {err}") from None
        self.state.count("trials.pass", best.origin)
        doubt = "" if best.verdict.green else f"; still failing, an example read from the task text: " \
            f"{best.verdict.failure.splitlines()[0]}"
        raise Done(f"{verdict} (trials: {best.origin}, candidate {self.record.candidates}{doubt})")


def first_block_closed(text: str) -> bool:
    """True once the reply holds a closed ``` block (the code; what follows is explanation)."""
    return first_fence(text, closed_only=True) is not None
