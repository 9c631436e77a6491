"""answer: give the final answer to the question, citing the file(s) as path:line."""

from pydantic import BaseModel, Field

from actions.base import Action, Context, Observation


class Args(BaseModel):
    text: str = Field(description="the answer, citing files as path:line")


def run(args: Args, ctx: Context) -> Observation:
    return Observation(args.text, final=True)


ACTION = Action(name="answer", args=Args, run=run, description=__doc__.strip(),
                example='Action: answer {"text": "Coupons are checked in shop/cart.py:41, in apply_coupon()."}',
                body_arg="text", aliases=("final_answer", "respond", "reply", "finish_answer", "final"))
