"""`ph doctor`: what the set-up has, and whether any model can run with it."""

import importlib
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DECODE_PROBE = """
import sys
from llama_cpp import Llama
Llama(model_path=sys.argv[1], n_ctx=64, n_threads=2, verbose=False).create_completion("def", max_tokens=1)
"""
REBUILD = ("rebuild llama-cpp-python without the AMX kernels: pip cache remove llama_cpp_python, then pip install "
           "--force-reinstall --no-deps llama-cpp-python with CMAKE_ARGS as in the Makefile (README: 'If the "
           "embedded model crashes')")


@dataclass
class Check:
    """One line of `ph doctor`."""

    name: str
    ok: bool
    note: str


def importable(module: str) -> tuple[bool, str]:
    """Whether the module loads here (found is not enough: a broken build fails only when it is loaded)."""
    try:
        importlib.import_module(module)
    except Exception as err:  # noqa: BLE001 - whatever stops the import stops the backend
        first = str(err).strip().splitlines()[0] if str(err).strip() else ""
        return False, f"{type(err).__name__}: {first}"[:100]
    return True, ""


def decodes(model: Path, timeout: float = 120.0) -> tuple[bool, str]:
    """Whether llama.cpp loads the pack and decodes one token, in a child process: a build whose kernels crash the
    process (ggml's AMX path on some Xeons) imports fine and dies only in its first decode."""
    try:
        proc = subprocess.run([sys.executable, "-c", DECODE_PROBE, str(model)], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"a one-token test decode did not finish in {timeout:.0f} s"
    if proc.returncode < 0:
        name = signal.Signals(-proc.returncode).name if -proc.returncode in signal.valid_signals() else "a signal"
        return False, f"crashed in a one-token test decode ({name}); {REBUILD}"
    if proc.returncode:
        last = (proc.stderr.strip().splitlines() or ["no error output"])[-1]
        return False, f"a one-token test decode failed: {last}"[:160]
    return True, ""


def diagnose(root: Path | None = None, python: Check | None = None) -> tuple[list[Check], str]:
    """The checks, and '' when some model can run, else what to do about it (one line). `python` is the line for the
    interpreter that runs the code of the repo at `root` (`python_check`)."""
    from pyharness.models.ollama import OllamaModel
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    llama, why = importable("llama_cpp")
    pack = is_present(PACKS[DEFAULT_PACK])
    runs, crash = decodes(pack_path(PACKS[DEFAULT_PACK])) if llama and pack else (False, "")
    ollama = OllamaModel()
    up = ollama.available()
    checks = [
        Check("python", sys.version_info >= (3, 11), f"{sys.version.split()[0]} (ph's own, {sys.executable})"),
        python or python_check(root),
        Check("llama-cpp-python", llama, "imports" if llama else f"{why}; pip install 'py-harness[local]'"),
        Check(f"pack {DEFAULT_PACK}", pack, str(pack_path(PACKS[DEFAULT_PACK]))),
        Check("embedded model", runs, "can run (a test decode passed)" if runs else crash
              or "cannot run: it needs llama-cpp-python and the pack"),
        Check("ollama", up, f"{ollama.host}, model {ollama.model}"),
        sandbox_check(),
    ]
    if runs or up:
        return checks, ""
    if crash:
        return checks, f"no model can run: the embedded model: {crash}"
    return checks, (f"no model can run: `ph model pull {DEFAULT_PACK}` with llama-cpp-python installed "
                    f"(pip install 'py-harness[local]'), or start Ollama and `ollama pull {ollama.model}`")


def python_check(root: Path | None, setting=None) -> Check:
    """The line for the interpreter that runs the repo's code and tests: its path, versions and why it was chosen,
    or what is wrong with it (no pytest: the command that installs it)."""
    from pyharness.cli.config import choose_python
    from pyharness.errors import UserError

    try:
        chosen = choose_python(root, setting)
    except UserError as err:
        return Check("repo python", False, str(err))
    where = f" for {root}" if root is not None else ""
    return Check("repo python", True, f"{chosen.describe().removeprefix('python: ')}: runs the tests{where}")


def sandbox_check() -> Check:
    """The sandbox line: what confines runs here (Landlock ABI, namespaces), or what is missing and the way round."""
    from pyharness.workspace import sandbox

    found = sandbox.support()
    if found.problem:
        return Check("sandbox", False, f"{found.problem}; runs need --no-sandbox (tests then run with your rights)")
    return Check("sandbox", True, f"Landlock ABI {found.landlock_abi}; user, PID, network, IPC, UTS and mount "
                                  f"namespaces, a root of its own; seccomp; rlimits (a test run can write only its "
                                  f"repo and a temp dir)")
