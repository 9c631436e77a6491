"""What the harness does after an action changed a file: run the tests at once (steer), and end the job itself when
a green full run meets the job's checkable rule (fix/add/stdout) — the harness, not the model, says when it is done."""

from typing import Protocol

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError, Done
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.jobs import Job
from pyharness.trials.budget import Budget


class Acting(Protocol):
    """The loop as the after-action checks see it (the Agent is one)."""

    actions: dict[str, Action]
    harness: HarnessConfig
    ctx: Context
    job: Job
    budget: Budget

AUTO_DONE = ("fix", "add", "stdout")


def after_action(agent: Acting, observation: Observation) -> Observation:
    """The observation the model sees for a non-final action, with the tests' verdict on a change added."""
    if observation.data.get("changed") and "run_tests" in agent.actions and agent.harness.on("steer"):
        # Like aider's auto-test: every change is checked at once, so the model sees its effect next turn.
        tests = agent.actions["run_tests"].run(agent.actions["run_tests"].args(), agent.ctx)
        agent.budget.count("steer.autotest")
        observation = Observation(
            f"{observation.text}\nTests after this change: {tests.text}",
            ok=observation.ok,
            data={**observation.data, **tests.data},
        )
    if observation.data.get("green") and agent.ctx.workspace.changed:
        note = auto_done(agent, observation)
        if note:
            observation = Observation(f"{observation.text}\n{note}", ok=observation.ok, data=observation.data)
    return observation


def auto_done(agent: Acting, observation: Observation) -> str:
    """fix/add/stdout: a green full run after a change meets a checkable rule, so the harness ends the job (raises
    Done); otherwise the note that tells the model why it is not done."""
    if agent.job.mode not in AUTO_DONE:
        return "The tests pass. If the task is complete, use done."
    try:
        verdict = agent.job.accept(observation, agent.ctx.workspace, agent.ctx)
    except ActionError as err:
        return str(err)
    agent.budget.count("accept.auto")
    raise Done(verdict + " (accepted by the harness after a green test run)")
