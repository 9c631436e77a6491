"""Properties of parse -> repair -> validate on generated replies (hypothesis).

Any text gives an action or a FormatError, never another exception, and quickly; the canonical rendering of a
parsed action parses back to the same action; a body block comes through byte for byte.
"""

import json
import re
import time

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pyharness.actions import CORE
from pyharness.actions.edit import Args as EditArgs
from pyharness.actions.edit import blocks
from pyharness.errors import FormatError
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.repair import PLACEHOLDERS
from pyharness.loop.jobs import MODE_ACTIONS

NAMES = sorted({name for action in CORE.values() for name in (action.name, *action.aliases)})
FRAGMENTS = [
    "Action:",
    "Action: ",
    "Args:",
    "Thought: ",
    "Observation: ",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    '"',
    "'",
    '"""',
    "'''",
    "\\",
    ",",
    ":",
    " ",
    "\n",
    "\t",
    "```",
    "```python\n",
    "```json\n",
    "\n```\n",
    "<tool_call>",
    "</tool_call>",
    "<<<<<<< SEARCH\n",
    "=======\n",
    ">>>>>>> REPLACE",
    "<|im_end|>",
    "**",
    "read(",
    "write(",
    'read("a.py")',
    "run_tests()",
    '{"path": "a.py"}',
    '"content": ',
    '{"name": "read", ',
    '"arguments": ',
    "None",
    "True",
    "null",
    "# the complete program",
    "<action>",
    "x = 1\n",
    "é",
    "\u2028",
    *NAMES,
]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def pipeline(mode: str = "fix", config: HarnessConfig | None = None) -> Pipeline:
    return Pipeline(
        {n: CORE[n] for n in MODE_ACTIONS[mode]},
        config or HarnessConfig(),
        default_write_path="main.py" if mode == "stdout" else None,
    )


def attempt(p: Pipeline, text: str):
    """The actions of a reply, or None on a FormatError; anything else fails the test."""
    try:
        return p.process_all(text)
    except FormatError:
        return None


fragments = st.lists(st.sampled_from(FRAGMENTS), max_size=40).map("".join)
texts = st.one_of(
    st.text(max_size=400), fragments, st.lists(st.one_of(st.text(max_size=8), fragments), max_size=8).map("".join)
)


@SETTINGS
@given(text=texts, mode=st.sampled_from(sorted(MODE_ACTIONS)), harness=st.booleans())
@example(text="Action: read {" + "{" * 5000, mode="fix", harness=True)
@example(text='Action: write {"path": "a.py", "content": """', mode="fix", harness=True)
@example(text="Observation: Action: read('a.py')", mode="ask", harness=True)
@example(text='Action: read {"path": "a.py", "start": "\u00b2"}', mode="fix", harness=True)
@example(text='Action: read {"path": "a.py", "start": ' + "1" * 5000 + "}", mode="fix", harness=True)
@example(text='Action: read {"path": "a.py", "end": ' + "1" * 5000 + "}", mode="fix", harness=False)
@example(text='Action: read {"a": ' + "[" * 5000 + "]" * 5000 + "}", mode="fix", harness=False)
@example(text='Action: read {"a": ' + "[" * 5000 + "]" * 5000 + "}", mode="fix", harness=True)
def test_any_text_gives_an_action_or_a_format_error(text, mode, harness):
    p = pipeline(mode, HarnessConfig() if harness else HarnessConfig.off())
    calls = attempt(p, text)
    assert calls is None or (calls and all(c.name in MODE_ACTIONS[mode] for c in calls))
    assert p.complete(text) in (True, False)


LONG = 100_000
PATHOLOGICAL = {
    "open calls": "read(\n" * 16_000,
    "open braces": "Action: read " + "{" * LONG,
    "bare braces": "{" * LONG,
    "escaped quotes": 'Action: read {"path": "' + '\\"' * 50_000,
    "open triple quote": 'Action: write {"content": """' + "x{" * 50_000,
    "raw blocks full of calls": 'Action: edit {"path": "a"}\n' + "<<<<<<< SEARCH\nopen(x)\n=======\n" * 3_000,
    "bare names": "read\n" * 20_000,
    "nested objects": '{"tool": "read", "arguments": ' * 3_000,
    "open tool calls": "<tool_call>{" * 8_000,
    "fences": "```\n" * 25_000,
    "json fences": '```json\n{"name": "read"\n```\n' * 3_000,
    "actions in a fence": 'Action: write {"path": "a"}\n```\n' + 'Action: read {"path": "x"}\n' * 3_500,
    "json-repair worst case": 'Action: read {"a"' + '{"a"' * 25_000,
    "json-repair garbage": "Action: read {" + '1"""["a"' * 12_000,
    "unclosed argument lines": ("Action: read {" + '"a": 1, ' * 200 + "\n") * 60,
    "one long line of spaces": " " * LONG,
    "blank lines": " \n" * (LONG // 2),
    "action line then spaces": "Action:" + " " * LONG,
    "long fence info string": "```" + "a" * LONG,
    "unclosed fences with info": "```python\n" * (LONG // 10),
}


def timed(text: str) -> float:
    started = time.perf_counter()
    attempt(pipeline("fix"), text)
    return time.perf_counter() - started


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_replies_of_100_kb_parse_quickly(name):
    assert timed(PATHOLOGICAL[name]) < 2.0


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=30))
def test_replies_of_100_kb_built_from_fragments_parse_quickly(pieces):
    unit = "".join(pieces)
    assert timed((unit * (LONG // len(unit) + 1))[:LONG]) < 2.0


FENCE_LINE = re.compile(r"^[ \t]*```")


def render(name: str, args: dict) -> str:
    """The canonical text of an action: the JSON line, then the body (write content, edit blocks) in a fence."""
    body_arg = CORE[name].body_arg if name in ("write", "edit") else None
    body = args.get(body_arg) if body_arg else None
    if isinstance(body, str) and body.endswith("\n") and not any(FENCE_LINE.match(ln) for ln in body.split("\n")):
        rest = {k: v for k, v in args.items() if k != body_arg}
        return f"Action: {name} {json.dumps(rest)}\n```\n{body}```"
    return f"Action: {name} {json.dumps(args)}"


values = st.one_of(st.text(max_size=30), st.integers(-5, 500), fragments)
call_args = st.dictionaries(
    st.sampled_from(
        [
            "path",
            "file",
            "filePath",
            "content",
            "code",
            "pattern",
            "query",
            "start",
            "end",
            "text",
            "summary",
            "target",
            "body",
            "search",
            "replace",
            "old_str",
            "new_str",
            "line",
            "x",
        ]
    ),
    values,
    max_size=4,
)


@st.composite
def replies(draw):
    """Calls in the shapes small models emit, with arbitrary names and arguments, and sometimes a body."""
    name, args = draw(st.sampled_from(NAMES)), draw(call_args)
    shape = draw(st.sampled_from(["canonical", "call", "tool", "fence", "bare", "python"]))
    if shape == "canonical":
        text = f"Action: {name} {json.dumps(args)}"
    elif shape == "call":
        text = f"{name}(" + ", ".join(f"{k}={v!r}" for k, v in args.items() if k.isidentifier()) + ")"
    elif shape == "tool":
        text = f"<tool_call>\n{json.dumps({'name': name, 'arguments': args})}\n</tool_call>"
    elif shape == "fence":
        text = f"```json\n{json.dumps({'tool': name, 'args': args})}\n```"
    elif shape == "bare":
        text = f"{name} {json.dumps(args)}"
    else:
        text = f"Action: {name} {args!r}"
    if draw(st.booleans()):
        text += "\n```python\n" + draw(st.text(max_size=60)).replace("`", "'") + "\n```"
    return draw(st.sampled_from(["", "Thought: go\n"])) + text + draw(st.sampled_from(["", "\n", "<|im_end|>"]))


@SETTINGS
@given(reply=st.one_of(replies(), texts), mode=st.sampled_from(["fix", "ask", "stdout"]))
def test_the_canonical_rendering_of_a_parsed_action_parses_to_the_same_action(reply, mode):
    calls = attempt(pipeline(mode), reply)
    if calls is None:
        return
    first = calls[0]
    again = pipeline(mode).process(render(first.name, first.args))
    assert (again.name, again.args) == (first.name, first.args)
    assert [i.kind for i in again.interventions] == []
    assert pipeline(mode, HarnessConfig.off()).process(render(first.name, first.args)).name == first.name


def no_line(pattern: str):
    rx = re.compile(pattern)
    return st.lists(st.text(max_size=40).filter(lambda ln: "\n" not in ln and not rx.match(ln)), max_size=12).map(
        lambda lines: "".join(ln + "\n" for ln in lines)
    )


code = no_line(r"[ \t]*```[ \t]*$").filter(lambda body: body and not PLACEHOLDERS.match(body))
"""A file body: any lines but a closing fence; not empty and not a placeholder (both are refused by design)."""


@SETTINGS
@given(body=code, lang=st.sampled_from(["python", "", "py"]), prefix=st.sampled_from(["", "Thought: x\n", "**"]))
@example(body='s = """\nObservation: Action: read("a")\n<|im_end|>\n"""\n', lang="python", prefix="")
@example(body="Action: done {}\nread('b')\n```python\n<<<<<<< SEARCH\n", lang="", prefix="")
def test_a_write_body_block_comes_through_byte_for_byte(body, lang, prefix):
    reply = f'{prefix}Action: write {{"path": "x.py"}}\n```{lang}\n{body}```'
    call = pipeline("fix").process(reply)
    assert (call.name, call.args) == ("write", {"path": "x.py", "content": body})


side = no_line(r"[ \t]*(?:<{5,9} ?SEARCH|>{5,9} ?REPLACE|={5,9}[ \t]*$)")


@SETTINGS
@given(search=side, replace=side, fenced=st.booleans(), then=st.sampled_from(["", "\nAction: run_tests {}"]))
@example(search='SEP = "======="\n    open(p)\nlist\n', replace="```\ndone()\n```\n", fenced=False, then="")
def test_an_edit_body_block_comes_through_byte_for_byte(search, replace, fenced, then):
    body = f"<<<<<<< SEARCH\n{search}=======\n{replace}>>>>>>> REPLACE"
    block = f"```\n{body}\n```" if fenced else body
    if fenced and any(FENCE_LINE.match(ln) for ln in body.split("\n")):
        return
    call = pipeline("fix").process(f'Action: edit {{"path": "x.py"}}\n{block}{then}')
    expected = body + "\n" if fenced else body
    assert (call.name, call.args) == ("edit", {"path": "x.py", "body": expected})
    assert blocks(EditArgs(**call.args)) == [(search, replace)]
