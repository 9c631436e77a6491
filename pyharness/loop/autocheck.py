"""What the harness does after an action changed a file: run the tests at once (steer), and end the job itself when
a green full run meets the job's checkable rule (fix/add/stdout) — the harness, not the model, says when it is done."""

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError, Done
from pyharness.loop.jobs import Job
from pyharness.loop.prompts import TESTS_PASS, after_change
from pyharness.runstate import RunState

AUTO_DONE = ("fix", "add", "stdout")


def after_action(observation: Observation, ctx: Context, job: Job, state: RunState,
                 run_tests: Action | None) -> Observation:
    """The observation the model sees for a non-final action, with the tests' verdict on a change added (`run_tests`:
    the action that runs them, None when the mode has none or the layer steer is off)."""
    if observation.data.get("changed") and run_tests is not None:
        # Like aider's auto-test: every change is checked at once, so the model sees its effect next turn.
        tests = run_tests.run(run_tests.args(), ctx)
        state.count("steer.autotest")
        observation = Observation(after_change(observation.text, tests.text), ok=observation.ok,
                                  data={**observation.data, **tests.data})
    if observation.data.get("green") and ctx.workspace.changed:
        note = auto_done(observation, ctx, job, state)
        if note:
            observation = Observation(f"{observation.text}\n{note}", ok=observation.ok, data=observation.data)
    return observation


def auto_done(observation: Observation, ctx: Context, job: Job, state: RunState) -> str:
    """fix/add/stdout: a green full run after a change meets a checkable rule, so the harness ends the job (raises
    Done); otherwise the note that tells the model why it is not done."""
    if job.mode not in AUTO_DONE:
        return TESTS_PASS
    try:
        verdict = job.accept(observation, ctx.workspace, ctx)
    except ActionError as err:
        return str(err)
    state.count("accept.auto")
    raise Done(verdict + " (accepted by the harness after a green test run)")
