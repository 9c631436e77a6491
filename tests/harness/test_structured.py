"""protocol=json (pyharness/harness/structured.py): the reply schema, the JSON reply read as a canonical action, the
prompt."""

import json
import subprocess
import sys

import pytest

from pyharness.actions import registry
from pyharness.harness.pipeline import HarnessConfig, Pipeline
from pyharness.harness.structured import as_action_text, example_json, reply_schema
from pyharness.loop.agent import AgentConfig
from pyharness.loop.prompts import system_prompt
from pyharness.loop.session import run_job
from pyharness.models.base import ChatOptions
from pyharness.models.scripted import ScriptedModel


@pytest.mark.parametrize("harness", ["on", "off"])
def test_every_action_example_as_json_means_what_the_text_example_means(harness):
    actions = registry()
    pipeline = Pipeline(actions, HarnessConfig.parse_spec(harness))
    for name, action in actions.items():
        text = pipeline.process(action.example)
        as_json = example_json(action.example)
        assert json.loads(as_json)["action"] == name
        call = pipeline.process(as_action_text(as_json))
        assert (call.name, call.args) == (text.name, text.args), name


def test_a_body_holding_a_fence_gets_a_longer_one_and_stays_whole():
    body = 'DOC = """\n```python\nx = 1\n```\n"""\n'
    reply = json.dumps({"action": "write", "args": {"path": "doc.py"}, "body": body})
    text = as_action_text(reply)
    assert "````python" in text
    call = Pipeline(registry(), HarnessConfig.parse_spec("off")).process(text)
    assert call.args["content"].rstrip("\n") == body.rstrip("\n")


@pytest.mark.parametrize("reply", ['Action: read {"path": "a.py"}', '["read"]', '{"args": {}}', "{broken",
                                   '{"action": "read", "args": "a.py"}'])
def test_a_reply_that_is_not_such_an_object_is_given_back_as_it_is(reply):
    assert as_action_text(reply) == reply


def test_the_json_system_prompt_shows_json_examples_and_no_action_lines():
    actions = registry()
    prompt = system_prompt("fix", actions, "orders/pricing.py", protocol="json")
    assert "Action:" not in prompt and "orders/pricing.py" in prompt
    shown = [json.loads(line) for line in prompt.splitlines() if line.startswith('{"action"')]
    assert [obj["action"] for obj in shown] == list(actions)
    assert set(reply_schema(actions)["properties"]["action"]["enum"]) == set(actions)


class Recording(ScriptedModel):
    """Scripted replies, keeping the options of each request."""

    def __init__(self, replies):
        super().__init__(replies=replies)
        self.options: list[ChatOptions] = []

    def chat(self, messages, options):
        self.options.append(options)
        return super().chat(messages, options)


BUGGY = {"calc.py": "def add(a, b):\n    return a - b\n",
         "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"}


def test_a_fix_run_in_protocol_json_edits_with_json_replies_and_the_tests_accept_it(tmp_path):
    """The bare loop (harness off: strict parser, no search) with protocol=json: a JSON line edit fixes the bug."""
    for rel, text in BUGGY.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    reply = json.dumps({"action": "edit", "args": {"path": "calc.py", "start": 2, "end": 2},
                        "body": "    return a + b\n"})
    model = Recording([reply, json.dumps({"action": "done", "args": {"summary": "fixed"}})])
    result = run_job(tmp_path, "fix", "", model, harness=HarnessConfig.parse_spec("off"),
                     config=AgentConfig(max_steps=3, protocol="json"), test_timeout=60)
    assert result.outcome == "done", result.reason
    assert (tmp_path / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert model.options and all(o.schema is not None and o.should_stop is None and not o.prefix
                                 for o in model.options)
    assert "write" in model.options[0].schema["properties"]["action"]["enum"]


def test_the_protocol_option_is_checked_once_for_every_run_command():
    for command in ("ask", "fix", "add", "run", "demo"):
        done = subprocess.run([sys.executable, "-m", "pyharness.cli", command, *(["x"] if command in
                              ("ask", "add", "run") else []), "--protocol", "yaml"], capture_output=True, text=True)
        assert done.returncode == 1 and "'yaml' is not one of text, json" in done.stderr, command


def test_a_format_error_in_protocol_json_says_how_a_json_reply_looks(tmp_path):
    from pathlib import Path

    from pyharness.harness.structured import JSON_REMINDER
    from pyharness.loop.transcript import read_transcript

    model = ScriptedModel(replies=[json.dumps({"action": "write", "args": {}, "body": "x = 1"})])
    result = run_job(tmp_path, "run", "make a.py", model, config=AgentConfig(max_steps=1, protocol="json"))
    (turn,) = [r for r in read_transcript(Path(result.transcript)) if r["event"] == "turn"]
    assert turn["observation"].startswith("Format error: ") and turn["observation"].endswith(JSON_REMINDER)
    assert not (tmp_path / "a.py").exists()
