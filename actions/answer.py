"""answer: give the final answer to the question, citing the file(s) as path:line."""

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation


class Args(BaseModel):
    text: str = Field(description="the answer, citing files as path:line")
    path: str | None = Field(default=None, description="the file the answer comes from (optional)")
    line: int | None = Field(default=None, description="the line in that file (optional)")


def run(args: Args, ctx: Context) -> Observation:
    text = args.text.strip()
    if args.path and args.path not in text:
        where = args.path if args.line is None or ":" in args.path else f"{args.path}:{args.line}"
        text = f"{text} ({where})"
    return Observation(text, final=True)


ACTION = Action(name="answer", args=Args, run=run, description=__doc__.strip(),
                example='Action: answer {"text": "Coupons are checked in shop/cart.py:41, in apply_coupon()."}',
                body_arg="text", aliases=("final_answer", "respond", "reply", "finish_answer", "final"))
