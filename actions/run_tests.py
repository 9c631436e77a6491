"""run_tests: run the test suite (or one test file / node id) and see the counts plus the first failure."""

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation
from pyharness.errors import ActionError


class Args(BaseModel):
    target: str | None = Field(default=None, description="optional test file or node id, e.g. tests/test_tax.py")


def run(args: Args, ctx: Context) -> Observation:
    from pyharness.workspace.pytestconfig import unsafe_target
    from pyharness.workspace.testrun import run_in_tree

    targets = []
    if args.target and args.target.strip() not in (".", "tests", "all"):
        target = args.target.strip()
        why = unsafe_target(target)
        if why:
            raise ActionError(f"run_tests: {why}; give a test file or node id inside the repo, "
                              "or no target for the whole suite")
        ctx.workspace.resolve(target.split("::")[0])
        targets = [target]
    result = run_in_tree(ctx.workspace, targets, ctx)
    if not targets:
        ctx.last_test = result
    return Observation(result.observation(), ok=result.green, data={"green": result.green, "counts": result.counts})


ACTION = Action(name="run_tests", args=Args, run=run, description=__doc__.strip(), example="Action: run_tests {}",
                aliases=("test", "tests", "pytest", "run_test", "runtests", "run_pytest", "execute_tests", "check"))
