"""`ph doctor`: what the set-up has, and whether any model can run with it."""

import importlib
import importlib.util
import sys
from dataclasses import dataclass


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


def diagnose() -> tuple[list[Check], str]:
    """The checks, and '' when some model can run, else what to do about it (one line)."""
    from pyharness.models.ollama import OllamaModel
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    llama, why = importable("llama_cpp")
    pack = is_present(PACKS[DEFAULT_PACK])
    ollama = OllamaModel()
    up = ollama.available()
    checks = [
        Check("python", sys.version_info >= (3, 11), sys.version.split()[0]),
        Check("pytest", importlib.util.find_spec("pytest") is not None, "runs the repo's tests"),
        Check("llama-cpp-python", llama, "imports" if llama else f"{why}; pip install 'py-harness[local]'"),
        Check(f"pack {DEFAULT_PACK}", pack, str(pack_path(PACKS[DEFAULT_PACK]))),
        Check("embedded model", llama and pack,
              "can run" if llama and pack else "cannot run: it needs llama-cpp-python and the pack"),
        Check("ollama", up, f"{ollama.host}, model {ollama.model}"),
    ]
    if (llama and pack) or up:
        return checks, ""
    return checks, (f"no model can run: `ph model pull {DEFAULT_PACK}` with llama-cpp-python installed "
                    f"(pip install 'py-harness[local]'), or start Ollama and `ollama pull {ollama.model}`")
