"""Shared fixtures: fresh copies of demo/orders, and running a job with scripted replies."""

import json
from pathlib import Path

import pytest

from pyharness.agent import AgentConfig
from pyharness.demo import load_jobs, make_repo
from pyharness.harness.pipeline import LAYERS, HarnessConfig
from pyharness.models.scripted import ScriptedModel
from pyharness.session import run_job
from pyharness.transcript import read_transcript

collect_ignore_glob = ["data/*"]  # fixture projects carry their own tests (tests/data/mutant_project)

LOOP_LAYERS = ",".join(name for name in LAYERS if name != "search")
"""Every harness layer but search: the loop as it runs for ask/add/run, or with `--layers` without search."""


@pytest.fixture
def demo_jobs() -> dict[str, dict]:
    return {job["name"]: job for job in load_jobs()}


@pytest.fixture
def orders(tmp_path, demo_jobs):
    """make(name) -> a git-initialised copy of demo/orders prepared for that demo job."""

    def make(name: str = "ask") -> Path:
        return make_repo(tmp_path / f"orders-{name}", demo_jobs[name])

    return make


@pytest.fixture
def drive():
    """drive(repo, mode, task, replies, **kw) -> (RunResult, transcript records)."""

    def run(repo: Path, mode: str, task: str, replies: list[str], *, max_steps: int = 20, harness: str = "on",
            default_write_path: str | None = None, search: bool = False):
        # these replies speak the action protocol of the loop; the search layer (tests/test_search.py) asks for
        # plain code instead, so it is off here unless a test asks for it
        layers = None if search or harness != "on" else LOOP_LAYERS
        model = ScriptedModel(replies=replies)
        result = run_job(repo, mode, task, model, config=AgentConfig(max_steps=max_steps),
                         harness=HarnessConfig.parse_spec(harness, layers), default_write_path=default_write_path)
        return result, read_transcript(Path(result.transcript))

    return run


def write_replies(path: Path, replies: list[str]) -> Path:
    """A scripted-model file holding these replies."""
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path


def live_pack():
    """The embedded pack's path, or skip the test with a message when it is not pulled."""
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    pack = PACKS[DEFAULT_PACK]
    if not is_present(pack):
        pytest.skip(f"embedded pack not pulled (run `ph model pull {DEFAULT_PACK}`); live test skipped")
    try:
        import llama_cpp  # noqa: F401
    except ImportError:
        pytest.skip("llama-cpp-python is not installed (pip install '.[local]'); live test skipped")
    return pack_path(pack)
