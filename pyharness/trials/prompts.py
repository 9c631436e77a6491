"""Every text the trials send the model, in one place: the plain request (what the model alone is asked), the
framings of a stdout, add and fix candidate (plain, plan, repair, line, guesses, spec), the request for a test, the
cloze hole asked in chat, and the paragraph that hands the loop back its turn when the schedule ends without a pass.
The targets (`candidates`, `suspects`) and the cloze rounds gather what goes in; the words are here.

Each request starts with the same head for one job (the task, the code), so a backend's prefix cache reads it once.
"""

import re
from dataclasses import dataclass

from pyharness.harness.parse import first_fence

PROGRAM_ASK = ("Write the whole Python program: it reads standard input and prints only the output asked for. "
               "Reply with the complete program in one ```python block.")
FUNCTION_ASK = "Complete the following Python function. Reply with the whole function in one ```python block."
PROTOCOL_PART = re.compile(r"\n*(?:Write the whole program to main\.py|The run_tests action)[\s\S]*$")
"""Where the loop's own instructions start in a stdout task's message (`pyharness.evals.tasks.task_message`)."""
WHOLE_FUNCTIONS = "in one ```python block (whole functions, nothing else)."
SAY_THE_LINE = "quote the wrong line and its corrected version, each in backticks: change `the wrong line` to " \
               "`the corrected line`."
MISSING = "<MISSING LINE>"
CLOZE_ASK = (f"One line of this Python file was replaced by {MISSING}. Reply with the missing line only, in one "
             "```python block.")


@dataclass
class Attempt:
    """The code of an earlier candidate and what its check said, for a repair prompt."""

    code: str
    failure: str


def _earlier(history: list[str]) -> str:
    """The three latest older attempts, one line each."""
    return "".join(f"\n{line}" for line in history[-3:])


def plain_request(task: str) -> str:
    """A stdout task asked as the model alone would be asked (protocol=oneshot sends exactly this): a function
    task's code with "complete the following function", or the task and its example with "write the program";
    the action protocol's own instructions are left out."""
    fence = first_fence(task, closed_only=True) or ""
    if "def " in fence:
        return f"{FUNCTION_ASK}\n\n```python\n{fence.strip()}\n```"
    return PROTOCOL_PART.sub("", task).rstrip() + "\n\n" + PROGRAM_ASK


def stdout_message(head: str, noun: str, kind: str, best: Attempt | None, history: list[str]) -> str:
    """A stdout candidate's one message: the plain request (`head`), with a plan asked first, or with the best
    attempt and its one failure (repair)."""
    if kind == "plan":
        return (f"{head}\n\nFirst write a short plan (at most 4 numbered lines) of how to get the exact output, "
                f"then the complete {noun} in one ```python block.")
    if kind == "repair" and best is not None:
        return (f"{head}\n\nThis {noun} was tried:\n```python\n{best.code.rstrip()}\n```\n"
                f"It fails: {best.failure}{_earlier(history)}\n\nFind the mistake and reply with the corrected "
                f"complete {noun} in one ```python block.")
    return head


def add_message(task: str, context: str, path: str, kind: str, best: Attempt | None, history: list[str]) -> str:
    """An add candidate's one message: the task, the files it names (`context`), and the new file asked for whole."""
    head = f"{task}{context}\n\nWrite the whole file {path}."
    if kind == "plan":
        return (f"{head} First write a short plan (at most 4 numbered lines), then the complete file in one "
                "```python block.")
    if kind == "repair" and best is not None:
        return (f"{head}\n\nThis version was tried:\n```python\n{best.code.rstrip()}\n```\nIts test fails: "
                f"{best.failure}{_earlier(history)}\n\nFind the mistake and reply with the corrected complete file in "
                "one ```python block.")
    return f"{head} Reply with the complete file in one ```python block."


def test_request(task: str, context: str, test_path: str, module: str, names: list[str]) -> str:
    """Asked once when an add task states no example the harness can read: the model writes the test."""
    return (f"{task}{context}\n\nWrite a pytest test file {test_path} for this feature: import with "
            f"`from {module} import {', '.join(names)}` and turn each example of the task into an assert in a test "
            "function. Reply with the whole file in one ```python block.")


@dataclass
class FixEvidence:
    """What a fix candidate's request shows: the failing test (its name and source), its traceback, the suspect
    functions' code (or their stubs), the constants they use, and the values the traced test saw."""

    failing: str
    test: str
    traceback: str
    code: str
    stubs: str
    constants: list[str]
    notes: list[str]


def fix_message(evidence: FixEvidence, kind: str, best: Attempt | None, history: list[str]) -> str:
    """A fix candidate's one message: the same head every time (so it stays cached), then what this framing asks."""
    e = evidence
    test = f"\n\nThe test:\n```python\n{e.test.rstrip()}\n```" if e.test else ""
    consts = ("\n\nConstants it uses:\n" + "\n".join(e.constants)) if e.constants else ""
    if kind == "spec":  # shown its own code the model sends it back unchanged, so the body is not shown
        return (f"A test fails: {e.failing}{test}\n\nIt fails with:\n{e.traceback.strip()}\n\nThe body of this code "
                f"has a bug, so it is not shown:\n```python\n{e.stubs}\n```{consts}\n\nWrite the complete function(s) "
                f"anew, following the docstring and the test, {WHOLE_FUNCTIONS}")
    seen = ("\n\nWhile the failing test ran:\n" + "\n".join(e.notes)) if e.notes else ""
    head = (f"A test fails: {e.failing}{test}\n\nIt fails with:\n{e.traceback.strip()}\n\nThe code it runs:\n"
            f"```python\n{e.code}\n```{consts}{seen}\n\nThe tests are right; the code has a bug.")
    if kind == "plan":
        return f"{head} First say in one line which line is wrong and why, then reply with the corrected " \
               f"function(s) {WHOLE_FUNCTIONS}"
    if kind == "guesses":
        return (f"{head} The bug is most likely in one line. Give three different guesses, the most likely first, "
                f"one per line; for each, {SAY_THE_LINE}")
    if kind == "line":
        return f"{head} Which line is wrong? Reply in one sentence that quotes the wrong line and then its " \
               "corrected version, each in backticks: change `the wrong line` to `the corrected line`."
    if kind == "repair" and best is not None:
        return (f"{head}\n\nThis version was tried:\n```python\n{best.code.rstrip()}\n```\nWith it: "
                f"{best.failure}{_earlier(history)}\n\nFind the wrong line and reply with the corrected function(s) "
                f"{WHOLE_FUNCTIONS}")
    return f"{head} Find the wrong line and reply with the corrected function(s) {WHOLE_FUNCTIONS}"


def cloze_chat(window: str) -> str:
    """A masked window as one chat message, for a backend without fill-in-the-middle (the hole is MISSING)."""
    return f"{CLOZE_ASK}\n\n```python\n{window.rstrip()}\n```"


def handoff(run: int, kept: str | None, files: list[str], failure: str) -> str:
    """What the loop is told when the schedule ended without a pass: how many candidates ran, which one (if any)
    is now in the files, and the one failure left."""
    where = (f"The best of them ({kept}) is now in {', '.join(files)}." if kept else
             "None beat the code as it was, which is unchanged.")
    return (f"(The harness tried {run} candidate(s) in scratch copies; none passed all checks. {where} What still "
            f"fails:\n{failure}\nGo on from here, one action a turn.)")
