"""Plain helpers the test files import (kept out of conftest.py: tests/safety has a conftest of its own, and two
modules named `conftest` cannot both be imported by name)."""

import json
from pathlib import Path

import pytest

from pyharness.harness.pipeline import LAYERS

LOOP_LAYERS = ",".join(name for name in LAYERS if name != "search")
"""Every harness layer but search: the loop as it runs for ask/add/run, or with `--layers` without search."""


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
