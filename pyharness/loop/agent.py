"""The loop: run -> step -> query -> act. One action per turn; the harness decides when the job is done."""

from collections.abc import Callable

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError, Done, FormatError, LimitsExceeded, ModelError, RepeatedFormatError, StopRun
from pyharness.harness.call import ActionCall
from pyharness.harness.context import ContextGuard
from pyharness.harness.loops import LoopDetector
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.steer import LOOKS, copied_example, next_example, source_files
from pyharness.harness.structured import reply_schema
from pyharness.loop.autocheck import after_action
from pyharness.loop.jobs import Job
from pyharness.loop.prompts import NOT_RUN, format_error, observation_message, system_prompt
from pyharness.loop.reading import Reader
from pyharness.loop.refusals import record, refusal
from pyharness.loop.runs import AgentConfig
from pyharness.loop.transcript import Transcript
from pyharness.models.base import END_OF_TURN, ChatOptions, Model, Reply
from pyharness.models.retry import chat_with_retries
from pyharness.runstate import Outcome, RunResult, RunState
from pyharness.trials.brief import Brief
from pyharness.trials.driver import Trials
from pyharness.workspace import sandbox
from pyharness.workspace.gitops import head
from pyharness.workspace.keepbest import BestTree, failing_of
from pyharness.workspace.noise import truncate
from pyharness.workspace.testrun import run_in_tree
from pyharness.workspace.undo import UndoLog

ACTION_STOPS = ["\nObservation:", "\nThought:", *END_OF_TURN, "\nUser:"]
"""Where a loop reply ends: before a made-up observation or a second thought, or at the end of the turn."""


class Agent:
    """Drives one model through one job in one workspace."""

    def __init__(self, model: Model, job: Job, ctx: Context, actions: dict[str, Action], *,
                 config: AgentConfig | None = None, harness: HarnessConfig | None = None,
                 emit: Callable[..., None] = lambda kind, **data: None, default_write_path: str | None = None,
                 escalate: Model | None = None):
        self.model, self.job, self.ctx, self.emit = model, job, ctx, emit
        self.config = config or AgentConfig()
        self.harness = harness or HarnessConfig()
        self.actions = dict(actions)
        """The actions this run offers (the mode's core set, plus ranked user actions)."""
        self.pipeline = Pipeline(self.actions, self.harness, default_write_path=default_write_path)
        self.pipeline.suggest = lambda: next_example(job.mode, self.actions, ctx.workspace, self.example_path)
        self.pipeline.sources = lambda: source_files(ctx.workspace)
        self.loops = LoopDetector()
        self.context_guard = ContextGuard(model.context_window)
        self.transcript = Transcript(ctx.workspace.root, job.mode)
        ctx.workspace.undo = UndoLog(ctx.workspace.root, self.transcript.path.stem)
        self.state = RunState(self.config.max_steps, self.config.max_seconds, str(self.transcript.path))
        """The run's steps, tokens, seconds, interventions and outcome, shared with the trials."""
        self.messages: list[dict] = []
        self.format_errors = 0
        self.schema = reply_schema(self.actions) if self.config.protocol == "json" else None
        """protocol=json: the JSON schema every reply is held to (the backend enforces it)."""
        self.reader = Reader(self.pipeline, self.harness, ctx.workspace, model,
                             lambda other, prefix: self.query(other, prefix), escalate=escalate,
                             json_protocol=self.schema is not None)
        self.heat = 0
        """Consecutive turns that failed without changing a file; above 0 the next turn is sampled."""

    def run(self) -> RunResult:
        """Run until the harness accepts the job or a budget ends it."""
        try:
            self.start()
            while True:
                self.step()
        except StopRun as end:
            self.state.end(end)
            self._check_judge()
            self._keep_best()
        except ModelError as err:
            self.state.fail(err)
            raise
        except KeyboardInterrupt:
            raise self.state.interrupt() from None
        finally:
            self.job.cleanup()
            result = self.state.close(sorted(self.ctx.workspace.changed))
            self.transcript.write("end", **vars(result))
            self.emit("end", result=result)
        return result

    def start(self) -> None:
        """Prepare the job, write the run's start record, and let the trials go first where they apply."""
        self.ctx.lint, self.ctx.spectrum, self.ctx.fail_first = (self.harness.on(name) for name in
                                                                  ("lint", "spectrum", "failfirst"))
        task = self.job.prepare(self.ctx.workspace, self.ctx)
        if self.harness.on("steer") and self.job.mode != "stdout":
            self.example_path = self.pipeline.example_path = self.job.example_path(self.ctx.workspace)
        system = system_prompt(self.job.mode, self.actions, self.example_path, self.config.protocol)
        self.transcript.write("start", mode=self.job.mode, task=self.job.task, model=self.model.name,
                              layers=sorted(self.harness.layers), sandbox=sandbox.describe(),
                              python=self.ctx.python_line(), system=system, first_message=task,
                              repo=str(self.ctx.workspace.root), commit=head(self.ctx.workspace.root))
        nothing = self.job.nothing_to_do()
        if nothing is not None:
            raise nothing
        if self.job.mode == "fix" and self.job.first_run is not None:
            self.best = BestTree(failing_of(self.job.first_run))
        self.messages = [{"role": "system", "content": system}, {"role": "user", "content": task}]
        if self.harness.on("trials") and Trials.applies(self.job, self.ctx.workspace):
            said = Trials(self.brief(), self.config.schedule).run()  # Done, LimitsExceeded, or what the loop is told
            self.messages[-1]["content"] += f"\n\n{said}" if said else ""

    def step(self) -> None:
        """One turn: ask the model, run its action, append the observation."""
        spent = self.state.spent()
        if spent:
            raise LimitsExceeded(spent)
        self.state.take_step()
        reply = self.query()
        if self.state.out_of_time():
            # a reply the time budget cut off is not acted on: half a file must not replace a whole one
            self._record(reply, None, Observation(NOT_RUN, ok=False))
            raise LimitsExceeded(self.state.time_up)
        reply, call, observation = self.understand_and_act(reply)
        observation, hint = self._loop_check(reply, call, observation)
        self._adjust_heat(call, observation)
        if self.harness.on("context"):
            hint = " ".join(h for h in (hint, self.context_guard.pressure_hint(self.last_prompt)) if h)
        if call is not None:
            self.reader.confidence.record(call.name, observation.ok)
        self._record(reply, call, observation)
        text = truncate(observation.text, self.config.observation_chars) if self.harness.on("context") \
            else observation.text
        self.messages.append({"role": "assistant", "content": reply.text.strip() or "(empty reply)"})
        self.messages.append({"role": "user", "content": observation_message(text, hint)})
        if self.harness.on("context"):
            self.messages = self.context_guard.compact(self.messages, self.last_prompt)
        if self.best is not None and self.ctx.last_test not in (None, self.measured):  # a whole-suite run in the tree
            self.measured = self.ctx.last_test
            self.best.measured(self.ctx.workspace, failing_of(self.measured), f"step {self.state.steps}")

    def understand_and_act(self, reply: Reply) -> tuple[Reply, ActionCall | None, Observation]:
        """The reply's action run (or why none ran): the reply it came from, the call, the observation."""
        call = None
        try:
            reply, call = self.reader.understand(reply, self.format_errors)
            self.format_errors = 0
            observation = self.act(call)
            self.pipeline.tool_output.add(observation.text)
        except Done as end:
            self._record(reply, call, Observation(f"Accepted: {end}", final=True))
            raise
        except FormatError as err:
            self.format_errors += 1
            observation = Observation(format_error(str(err), self.schema is not None), ok=False)
            if self.harness.on("validate"):
                self.state.count("validate.format_error", str(err).split("\n")[0][:100])
            if self.format_errors >= self.config.max_format_errors:
                self._record(reply, call, observation)
                raise RepeatedFormatError(
                    f"{self.format_errors} replies in a row had no valid action; last: {err}") from None
        except ActionError as err:
            observation = Observation(f"Error: {err}", ok=False)
            note = refusal(call, err, self.ctx.workspace)
            if note:
                record(self.state.result, note)
                self.emit("refused", text=note)
        return reply, call, observation

    def query(self, model: Model | None = None, prefix: str = "") -> Reply:
        """Ask the model (or the escalation model) for the next reply; `prefix` starts the reply for it."""
        options = ChatOptions(
            prefix=prefix, stop=ACTION_STOPS, max_tokens=self.config.max_tokens, seed=self.state.steps,
            temperature=0.7 if self.heat else 0.0, on_text=lambda piece: self.emit("token", text=piece),
            should_stop=None if self.schema else self._should_stop, schema=self.schema)
        self.emit("thinking", step=self.state.steps)
        reply = chat_with_retries(
            model or self.model, self.messages, options, attempts=self.config.model_retries,
            backoff=self.config.retry_backoff, on_retry=lambda n, err, wait: self.emit("retry", error=err, wait=wait))
        self.emit("reply", reply=reply)
        self.state.spend(reply)
        self.last_prompt = reply.prompt_tokens
        return reply

    def act(self, call: ActionCall) -> Observation:
        """Run the action; a final action (answer/done) goes to the job's acceptance rule."""
        self.tree_hash = self.ctx.workspace.state_hash()
        action = self.actions[call.name]
        self.emit("action", call=call)
        if self.harness.on("steer"):
            retarget = copied_example(call, self.actions, self.ctx.workspace, self.pipeline.default_write_path)
            if retarget is not None:
                call.interventions.append(retarget)
        observation = action.run(action.args.model_validate(call.args), self.ctx)
        if observation.final:
            verdict = self.job.accept(observation, self.ctx.workspace, self.ctx)
            self.state.result.answer = observation.text
            raise Done(verdict)
        if call.name in LOOKS:
            self.reader.looked.add((call.key(), self.tree_hash))
        self.state.result.attempts += bool(observation.data.get("changed"))
        tests = self.actions.get("run_tests") if self.harness.on("steer") else None
        return after_action(observation, self.ctx, self.job, self.state, tests)

    def brief(self) -> Brief:
        """What the trials of this run are given: the model, job, context and settings, and the run's state."""
        return Brief(self.model, self.job, self.ctx, self.harness, self.state, self.config.max_tokens,
                     self.transcript.turn, self.emit, best=self.best)

    def _keep_best(self) -> None:
        """A stopped fix run never leaves the tree worse than it found it: with more judging tests failing than at
        the start, the best state seen goes back (`pyharness.workspace.keepbest`), and the run's record says so."""
        if self.best is None or self.state.result.outcome != Outcome.STOPPED:
            return
        ws = self.ctx.workspace
        try:
            said = self.best.settle(ws, lambda: failing_of(run_in_tree(ws, None, self.ctx)))
        except StopRun as err:  # Invalid: the judge was touched by that last run
            self.state.invalidate(str(err))
            return
        if said:
            self.state.count("keepbest.put_back", said)
            self.state.result.reason += f"; {said}"
            self.state.result.put_back = said
            self.transcript.write("put_back", note=said)

    def _loop_check(self, reply: Reply, call: ActionCall | None, observation: Observation) -> tuple[Observation, str]:
        """The loop layer's word on a repeated call or error: a hint, a redirect in place of the observation, or the
        end of the run."""
        if call is None or not self.harness.on("loops"):
            return observation, ""
        verdict = self.loops.observe(call.key(), self.tree_hash, None if observation.ok else observation.text)
        if verdict.level:
            self.state.count(f"loops.{verdict.kind}", ("hint", "redirect", "stop")[min(verdict.level, 3) - 1])
        if verdict.level >= 3:
            self._record(reply, call, observation)
            raise LimitsExceeded(verdict.message)
        if verdict.level == 2:
            return Observation(verdict.message, ok=False), ""
        return observation, verdict.message if verdict.level == 1 else ""

    def _check_judge(self) -> None:
        """fix mode: the test files and test config hashed once more after the run; a run that changed them (found
        during it, or only now) is invalid, and says so before its end record."""
        guard = self.ctx.workspace.guard
        if guard is None:
            return
        found, late = self.state.result.invalid, guard.verify(self.ctx.workspace)
        if found:
            self.state.result.invalid = late or found
        elif late:
            self.state.invalidate(late)
        if found or late:
            self.transcript.write("invalid", reason=found or late)

    def _should_stop(self, text: str) -> bool:
        """End generation at the end of one complete action, or when the run's time budget is spent."""
        if self.state.out_of_time():
            return True
        return self.harness.on("parse") and self.pipeline.complete(text)

    def _adjust_heat(self, call: ActionCall | None, observation: Observation) -> None:
        """Greedy decoding repeats itself: after a failed or repeated turn, sample the next one (seeded)."""
        if not self.harness.on("loops"):
            return
        stuck = call is None or not observation.ok
        now = self.ctx.workspace.state_hash()
        self.heat = self.heat + 1 if stuck and now == self.tree_hash else 0
        if self.heat:
            self.state.count("loops.temperature", "the next turn is sampled (seeded)")

    def _record(self, reply: Reply, call: ActionCall | None, observation: Observation) -> None:
        made = [*(call.interventions if call else []), *self.state.notes]
        for item in call.interventions if call else []:
            self.state.count(item.kind, note=False)
        self.emit("observation", observation=observation, interventions=made)
        self.transcript.turn(
            self.state.steps, self.messages[-2:] if self.state.steps > 1 else self.messages, reply,
            action=None if call is None else {"name": call.name, "args": call.args},
            interventions=[vars(i) for i in made], observation=observation.text, ok=observation.ok,
            confidence=self.reader.score)

    best: BestTree | None = None
    """fix mode: the start's failing count and the best state of the tree seen, put back if the run ends worse."""
    measured = None
    """The newest whole-suite run in the tree that `best` has counted (`Context.last_test`)."""
    tree_hash = ""
    """The state of the repo's files when the latest action ran (`Workspace.state_hash`)."""
    last_prompt = 0
    example_path: str | None = None
    """A real file of the repo that the prompt's examples name (steer), instead of a made-up one."""
