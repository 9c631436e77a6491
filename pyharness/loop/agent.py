"""The loop: run -> step -> query -> act. One action per turn; the harness decides when the job is done."""

import time
from collections.abc import Callable

from pyharness.actions.base import Action, Context, Observation
from pyharness.workspace import sandbox
from pyharness.loop.autocheck import after_action
from pyharness.errors import (
    ActionError, Done, FormatError, Interrupted, Invalid, LimitsExceeded, ModelError, RepeatedFormatError, StopRun,
)
from pyharness.workspace.gitops import head
from pyharness.harness.call import ActionCall
from pyharness.harness.confidence import Confidence
from pyharness.harness.context import ContextGuard
from pyharness.harness.loops import LoopDetector
from pyharness.workspace.noise import truncate
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.steer import LOOKS, copied_example, next_example, source_files
from pyharness.loop.jobs import Job
from pyharness.models.base import ChatOptions, Model, Reply
from pyharness.models.retry import chat_with_retries
from pyharness.loop.prompts import system_prompt
from pyharness.loop.reading import Reader
from pyharness.loop.refusals import record, refusal
from pyharness.loop.runs import AgentConfig, RunResult
from pyharness.trials.budget import Budget, SearchRun
from pyharness.trials.driver import Trials
from pyharness.harness.structured import JSON_REMINDER, reply_schema
from pyharness.loop.transcript import Transcript
from pyharness.workspace.undo import UndoLog

STOP = ["\nObservation:", "\nThought:", "<|im_end|>", "<|endoftext|>", "\nUser:"]


class Agent:
    """Drives one model through one job in one workspace."""

    def __init__(
        self,
        model: Model,
        job: Job,
        ctx: Context,
        actions: dict[str, Action],
        *,
        config: AgentConfig | None = None,
        harness: HarnessConfig | None = None,
        emit: Callable[..., None] = lambda kind, **data: None,
        default_write_path: str | None = None,
        escalate: Model | None = None,
    ):
        self.model, self.job, self.ctx, self.emit = model, job, ctx, emit
        self.config = config or AgentConfig()
        self.harness = harness or HarnessConfig()
        self.actions = dict(actions)
        """The actions this run offers (the mode's core set, plus ranked user actions)."""
        self.pipeline = Pipeline(self.actions, self.harness, default_write_path=default_write_path)
        self.pipeline.suggest = lambda: next_example(job.mode, self.actions, ctx.workspace, self.example_path)
        self.pipeline.sources = lambda: source_files(ctx.workspace)
        self.loops = LoopDetector()
        self.guard = ContextGuard(model.context_window)
        self.transcript = Transcript(ctx.workspace.root, job.mode)
        ctx.workspace.undo = UndoLog(ctx.workspace.root, self.transcript.path.stem)
        self.messages: list[dict] = []
        self.result = RunResult(outcome="stopped", reason="", transcript=str(self.transcript.path))
        self.format_errors = 0
        self.escalate = escalate
        self.schema = reply_schema(self.actions) if self.config.protocol == "json" else None
        """protocol=json: the JSON schema every reply is held to (the backend enforces it)."""
        self.reader = Reader(self)
        self.confidence = Confidence()
        self.confidence_last = 1.0
        self.heat = 0
        """Consecutive turns that failed without changing a file; above 0 the next turn is sampled."""
        self.looked: set[tuple[str, str]] = set()
        self.budget = Budget(self.result, self.config.max_steps, self.config.max_seconds)
        """The steps and seconds left and the run's counters, shared with a search (which never sees the Agent)."""

    def run(self) -> RunResult:
        """Run until the harness accepts the job or a budget ends it."""
        self.ctx.lint, self.ctx.spectrum, self.ctx.fail_first = (self.harness.on(name) for name in
                                                                  ("lint", "spectrum", "failfirst"))
        try:
            task = self.job.prepare(self.ctx.workspace, self.ctx)
            if self.harness.on("steer") and self.job.mode != "stdout":
                self.example_path = self.pipeline.example_path = self.job.example_path(self.ctx.workspace)
            system = system_prompt(self.job.mode, self.actions, self.example_path, self.config.protocol)
            self.transcript.write(
                "start",
                mode=self.job.mode,
                task=self.job.task,
                model=self.model.name,
                layers=sorted(self.harness.layers),
                sandbox=sandbox.describe(),
                python=self.ctx.python_line(),
                system=system,
                first_message=task,
                repo=str(self.ctx.workspace.root),
                commit=head(self.ctx.workspace.root),
            )
            nothing = self.job.nothing_to_do()
            if nothing:
                raise Done(nothing) if nothing.startswith("nothing") else LimitsExceeded(nothing)
            self.messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
            if self.harness.on("trials") and Trials.applies(self.job, self.ctx.workspace):
                # Done, LimitsExceeded, or what the loop is told next
                said = Trials(self.search_run(), self.config.schedule).run()
                self.messages[-1]["content"] += f"\n\n{said}" if said else ""
            while True:
                self.step()
        except Done as end:
            self.result.outcome, self.result.reason = "done", str(end)
            self.result.first_pass = self.result.first_pass or max(1, self.result.attempts)
        except StopRun as end:
            self.result.outcome = "invalid" if isinstance(end, Invalid) else "stopped"
            self.result.reason = f"run invalid: {end}" if isinstance(end, Invalid) else str(end)
        except ModelError as err:
            self.result.outcome, self.result.reason = "error", str(err)
            raise
        except KeyboardInterrupt:
            self.result.outcome, self.result.reason = "interrupted", "interrupted by the user (Ctrl-C)"
            raise Interrupted(self.result) from None
        finally:
            self.result.changed = sorted(self.ctx.workspace.changed)
            self.job.cleanup()
            self.result.seconds = round(time.monotonic() - self.budget.started, 2)
            self.transcript.write("end", **{k: v for k, v in vars(self.result).items()})
            self.emit("end", result=self.result)
        return self.result

    def step(self) -> None:
        """One turn: ask the model, run its action, append the observation."""
        if self.result.steps >= self.config.max_steps:
            raise LimitsExceeded(f"step budget of {self.config.max_steps} used up")
        if self.budget.out_of_time():
            raise LimitsExceeded(f"time budget of {self.config.max_seconds:.0f} s used up")
        self.result.steps += 1
        self.budget.notes = []
        reply = self.query()
        if self.budget.out_of_time():
            # a reply the time budget cut off is not acted on: half a file must not replace a whole one
            self._record(reply, None, Observation("(not run: the time budget ended this reply)", ok=False))
            raise LimitsExceeded(f"time budget of {self.config.max_seconds:.0f} s used up")
        call, observation, hint = None, None, ""
        try:
            reply, call = self.reader.understand(reply)
            self.format_errors = 0
            observation = self.act(call)
            self.pipeline.tool_output.add(observation.text)
        except Done as end:
            self._record(reply, call, Observation(f"Accepted: {end}", final=True))
            raise
        except FormatError as err:
            self.format_errors += 1
            observation = Observation(f"Format error: {err}{JSON_REMINDER if self.schema else ''}", ok=False)
            if self.harness.on("validate"):
                self.budget.count("validate.format_error", str(err).split("\n")[0][:100])
            if self.format_errors >= self.config.max_format_errors:
                self._record(reply, call, observation)
                raise RepeatedFormatError(
                    f"{self.format_errors} replies in a row had no valid action; last: {err}"
                ) from None
        except ActionError as err:
            observation = Observation(f"Error: {err}", ok=False)
            note = refusal(call, err, self.ctx.workspace)
            if note:
                record(self.result, note)
                self.emit("refused", text=note)
        if call is not None and self.harness.on("loops"):
            verdict = self.loops.observe(call.key(), self._state, None if observation.ok else observation.text)
            if verdict.level:
                self.budget.count(f"loops.{verdict.kind}", ("hint", "redirect", "stop")[min(verdict.level, 3) - 1])
            if verdict.level >= 3:
                self._record(reply, call, observation)
                raise LimitsExceeded(verdict.message)
            if verdict.level == 2:
                observation = Observation(verdict.message, ok=False)
            elif verdict.level == 1:
                hint = verdict.message
        self._adjust_heat(call, observation)
        if self.harness.on("context"):
            hint = " ".join(h for h in (hint, self.guard.pressure_hint(self.last_prompt)) if h)
        if call is not None:
            self.confidence.record(call.name, observation.ok)
        self._record(reply, call, observation)
        text = observation.text
        if self.harness.on("context"):
            text = truncate(text, self.config.observation_chars)
        self.messages.append({"role": "assistant", "content": reply.text.strip() or "(empty reply)"})
        self.messages.append(
            {"role": "user", "content": f"Observation: {text}" + (f"\n\nHint: {hint}" if hint else "")}
        )
        if self.harness.on("context"):
            self.messages = self.guard.compact(self.messages, self.last_prompt)

    def query(self, model: Model | None = None, prefix: str = "") -> Reply:
        """Ask the model (or the escalation model) for the next reply; `prefix` starts the reply for it."""
        options = ChatOptions(
            prefix=prefix,
            stop=STOP,
            max_tokens=self.config.max_tokens,
            seed=self.result.steps,
            temperature=0.7 if self.heat else 0.0,
            on_text=lambda piece: self.emit("token", text=piece),
            should_stop=None if self.schema else self._should_stop,
            schema=self.schema,
        )
        self.emit("thinking", step=self.result.steps)
        reply = chat_with_retries(
            model or self.model, self.messages, options, attempts=self.config.model_retries,
            backoff=self.config.retry_backoff, on_retry=lambda n, err, wait: self.emit("retry", error=err, wait=wait),
        )
        self.emit("reply", reply=reply)
        self.result.prompt_tokens += reply.prompt_tokens
        self.result.cached_tokens += reply.cached_tokens
        self.result.completion_tokens += reply.completion_tokens
        self.last_prompt = reply.prompt_tokens
        return reply

    def act(self, call: ActionCall) -> Observation:
        """Run the action; a final action (answer/done) goes to the job's acceptance rule."""
        self._state = self.ctx.workspace.state_hash()
        action = self.actions[call.name]
        self.emit("action", call=call)
        if self.harness.on("steer"):
            retarget = copied_example(call, self.actions, self.ctx.workspace, self.pipeline.default_write_path)
            if retarget is not None:
                call.interventions.append(retarget)
        observation = action.run(action.args.model_validate(call.args), self.ctx)
        if observation.final:
            verdict = self.job.accept(observation, self.ctx.workspace, self.ctx)
            self.result.answer = observation.text
            raise Done(verdict)
        if call.name in LOOKS:
            self.looked.add((call.key(), self._state))
        self.result.attempts += bool(observation.data.get("changed"))
        return after_action(self, observation)

    def _should_stop(self, text: str) -> bool:
        """End generation at the end of one complete action, or when the run's time budget is spent."""
        if self.budget.out_of_time():
            return True
        return self.harness.on("parse") and self.pipeline.complete(text)

    def _adjust_heat(self, call: ActionCall | None, observation: Observation) -> None:
        """Greedy decoding repeats itself: after a failed or repeated turn, sample the next one (seeded)."""
        if not self.harness.on("loops"):
            return
        stuck = call is None or not observation.ok
        changed = self.ctx.workspace.state_hash()
        self.heat = self.heat + 1 if stuck and changed == self._state else 0
        if self.heat:
            self.budget.count("loops.temperature", "the next turn is sampled (seeded)")

    def _record(self, reply: Reply, call: ActionCall | None, observation: Observation) -> None:
        made = [*(call.interventions if call else []), *self.budget.notes]
        for item in call.interventions if call else []:
            self.budget.count(item.kind, note=False)
        self.emit("observation", observation=observation, interventions=made)
        self.transcript.turn(
            self.result.steps, self.messages[-2:] if self.result.steps > 1 else self.messages, reply,
            action=None if call is None else {"name": call.name, "args": call.args},
            interventions=[vars(i) for i in made], observation=observation.text, ok=observation.ok,
            confidence=self.confidence_last,
        )

    def search_run(self) -> SearchRun:
        """What a search of this run is given: the model, job, context and settings, and the shared budget."""
        return SearchRun(self.model, self.job, self.ctx, self.harness, self.budget, self.config.max_tokens,
                         self.transcript.turn, self.emit)

    _state = ""
    last_prompt = 0
    example_path: str | None = None
    """A real file of the repo that the prompt's examples name (steer), instead of a made-up one."""
