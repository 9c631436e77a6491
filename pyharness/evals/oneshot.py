"""protocol=oneshot: the model alone, one chat call with no loop, tests or harness; its code becomes main.py."""

import re
import time
from pathlib import Path

from pyharness.errors import ModelError
from pyharness.evals.tasks import StdoutTask
from pyharness.loop.transcript import Transcript
from pyharness.models.base import END_OF_TURN, ChatOptions, Model, Reply
from pyharness.runstate import Outcome, RunResult

FENCE = re.compile(r"```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def oneshot_message(task: StdoutTask) -> str:
    """The one user message of a oneshot run: the task and a request for the whole code in one fence (the same
    message the trials' first, greedy candidate is asked with)."""
    from pyharness.evals.tasks import task_message
    from pyharness.trials.prompts import plain_request

    return plain_request(task_message(task))


def extract_code(reply: str) -> str:
    """The first ```python block (else the first fenced block; an unclosed one runs to the end), else the reply."""
    blocks = [(m.group(1).lower(), m.group(2)) for m in FENCE.finditer(reply)]
    for lang, body in blocks:
        if lang in ("python", "py", "python3"):
            return body
    return blocks[0][1] if blocks else reply


def ask_once(model: Model, transcript: Transcript, message: str, options: ChatOptions, started: float,
             **start) -> Reply:
    """Write the start record and ask once; a model error ends the transcript and is raised."""
    transcript.write("start", **start, model=model.name, layers=[], system="", first_message=message,
                     max_tokens=options.max_tokens, temperature=options.temperature, seed=options.seed,
                     stop=options.stop)
    try:
        return model.chat([{"role": "user", "content": message}], options)
    except ModelError as err:
        ended = RunResult(outcome=Outcome.ERROR, reason=str(err), transcript=str(transcript.path),
                          seconds=round(time.monotonic() - started, 2))
        transcript.write("end", **vars(ended))
        raise


def finish_once(transcript: Transcript, reply: Reply, started: float, applied: bool, wrote: object, reason: str,
                **result_fields) -> RunResult:
    """The run's result from its one reply; the turn (and put_back) and end records written."""
    result = RunResult(outcome=Outcome.DONE, reason=reason, steps=1, prompt_tokens=reply.prompt_tokens,
                       cached_tokens=reply.cached_tokens, completion_tokens=reply.completion_tokens,
                       seconds=round(time.monotonic() - started, 2), transcript=str(transcript.path), attempts=1,
                       first_pass=1 if applied else 0, **result_fields)
    transcript.write("turn", step=1, reply=reply.text, finish_reason=reply.finish_reason,
                     seconds=round(reply.seconds, 3), prompt_tokens=reply.prompt_tokens,
                     cached_tokens=reply.cached_tokens, completion_tokens=reply.completion_tokens, wrote=wrote)
    if result.put_back:  # a fix reply that left more tests failing went back (`oneshot_jobs`)
        transcript.write("put_back", note=result.put_back)
    transcript.write("end", **vars(result))
    return result


def run_oneshot(repo: Path, task: StdoutTask, model: Model) -> RunResult:
    """Ask once, write the reply's code to repo/main.py, and log prompt and reply to a transcript in the repo."""
    transcript = Transcript(repo, "oneshot")
    options = ChatOptions(max_tokens=768, temperature=0.0, seed=0, stop=list(END_OF_TURN))
    started = time.monotonic()
    reply = ask_once(model, transcript, oneshot_message(task), options, started, mode="oneshot", task=task.id)
    code = extract_code(reply.text)
    if code.strip():
        (repo / "main.py").write_text(code if code.endswith("\n") else code + "\n", encoding="utf-8")
    return finish_once(transcript, reply, started, bool(code.strip()), "main.py" if code.strip() else "",
                       "one reply (oneshot)")
