"""Shared fixtures: fresh copies of demo/orders, and running a job with scripted replies."""

import signal
from pathlib import Path

import pytest
from runkit import LOOP_LAYERS

from pyharness.evals.demo import load_jobs, make_repo
from pyharness.harness.pipeline import HarnessConfig
from pyharness.loop.agent import AgentConfig
from pyharness.loop.session import run_job
from pyharness.loop.transcript import read_transcript
from pyharness.models.scripted import ScriptedModel


def pytest_configure(config):
    """Ctrl-C must reach the tests that send it: a shell that starts `make test` in the background (`make test &`)
    hands pytest SIGINT ignored, and every process it starts inherits that, so those tests would see no
    KeyboardInterrupt. Here SIGINT gets Python's own handler back (a foreground run already has it)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)

collect_ignore_glob = ["data/*"]  # fixture projects carry their own tests (tests/data/mutant_project)



@pytest.fixture(autouse=True)
def _state_dir(tmp_path_factory, monkeypatch):
    """ph's per-repo state (undo journal, lock) goes to a temp folder, never the user's state dir."""
    monkeypatch.setenv("PH_STATE_DIR", str(tmp_path_factory.mktemp("ph-state")))


@pytest.fixture(autouse=True)
def _no_user_settings(tmp_path_factory, monkeypatch):
    """The user's own config file, PH_MODEL, the interpreter's sources and OpenAI variables never reach a test (each
    test sets what it needs)."""
    monkeypatch.setenv("PH_CONFIG", str(tmp_path_factory.mktemp("ph-config") / "config.toml"))
    for name in ("PH_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY", "PH_PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX"):
        monkeypatch.delenv(name, raising=False)


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
            default_write_path: str | None = None, trials: bool = False):
        # these replies speak the action protocol of the loop; the trials layer (tests/trials/) asks for
        # plain code instead, so it is off here unless a test asks for it
        layers = None if trials or harness != "on" else LOOP_LAYERS
        model = ScriptedModel(replies=replies)
        result = run_job(repo, mode, task, model, config=AgentConfig(max_steps=max_steps),
                         harness=HarnessConfig.parse_spec(harness, layers), default_write_path=default_write_path)
        return result, read_transcript(Path(result.transcript))

    return run
