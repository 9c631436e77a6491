"""Turn a `--model` spec into a backend: `ollama:NAME`, `llamacpp:PACK_OR_PATH`, `scripted:PATH`, or none."""

from pyharness.errors import ModelError
from pyharness.models.base import Model

DEFAULT_OLLAMA = "llama3.1:8b"


def resolve_model(spec: str | None) -> Model:
    """The model a spec names; with no spec: Ollama if it has the default model, else the pulled embedded pack."""
    if not spec:
        return _default()
    kind, _, rest = spec.partition(":")
    if kind == "ollama":
        from pyharness.models.ollama import OllamaModel

        return OllamaModel(rest or DEFAULT_OLLAMA)
    if kind == "llamacpp":
        from pyharness.models.llamacpp import LlamaCppModel
        from pyharness.models.packs import DEFAULT_PACK, resolve_pack_spec

        target = rest or DEFAULT_PACK
        return LlamaCppModel(resolve_pack_spec(target), name=f"llamacpp:{target}")
    if kind == "scripted":
        from pyharness.models.scripted import ScriptedModel

        if not rest:
            raise ModelError("scripted needs a file: --model scripted:replies.json")
        return ScriptedModel(rest)
    raise ModelError(f"unknown model spec '{spec}': use ollama:NAME, llamacpp:PACK_OR_PATH or scripted:PATH")


def _default() -> Model:
    from pyharness.models.llamacpp import LlamaCppModel
    from pyharness.models.ollama import OllamaModel
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    ollama = OllamaModel(DEFAULT_OLLAMA)
    if ollama.available():
        return ollama
    pack = PACKS[DEFAULT_PACK]
    if is_present(pack):
        return LlamaCppModel(pack_path(pack), name=f"llamacpp:{DEFAULT_PACK}")
    raise ModelError(f"no model found: start Ollama and run `ollama pull {DEFAULT_OLLAMA}`, "
                     f"or fetch the embedded model with `ph model pull {DEFAULT_PACK}`")
