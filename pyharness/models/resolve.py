"""Turn a `--model` spec into a backend: `ollama:NAME`, `llamacpp:PACK_OR_PATH`, `openai:MODEL[@URL]`,
`scripted:PATH`, or none (auto)."""

from pyharness.errors import ModelError
from pyharness.models.base import Model

DEFAULT_OLLAMA = "llama3.1:8b"
SPECS = "ollama:NAME, llamacpp:PACK_OR_PATH, openai:MODEL[@URL] or scripted:PATH"


def resolve_model(spec: str | None) -> Model:
    """The model a spec names; with no spec: Ollama if it has the default model, else the pulled embedded pack."""
    if not spec:
        return auto_model()[0]
    kind, _, rest = spec.partition(":")
    if kind == "ollama":
        from pyharness.models.ollama import OllamaModel

        return OllamaModel(rest or DEFAULT_OLLAMA)
    if kind == "llamacpp":
        from pyharness.models.llamacpp import LlamaCppModel
        from pyharness.models.packs import DEFAULT_PACK, resolve_pack_spec

        target = rest or DEFAULT_PACK
        return LlamaCppModel(resolve_pack_spec(target), name=f"llamacpp:{target}")
    if kind == "openai":
        from pyharness.models.openai import OpenAIModel, parse_openai_spec

        return OpenAIModel(*parse_openai_spec(rest))
    if kind == "scripted":
        from pyharness.models.scripted import ScriptedModel

        if not rest:
            raise ModelError("scripted needs a file: --model scripted:replies.json")
        return ScriptedModel(rest)
    raise ModelError(f"unknown model spec '{spec}': use {SPECS}")


def auto_model() -> tuple[Model, str]:
    """With no model named: Ollama if it has the default model, else the pulled embedded pack; plus why, in a few
    words. When neither is there, a `ModelError` that lists what Ollama has (if it answers) and both ways on."""
    from pyharness.models.llamacpp import LlamaCppModel
    from pyharness.models.ollama import OllamaModel, has_models
    from pyharness.models.packs import DEFAULT_PACK, PACKS, is_present, pack_path

    ollama = OllamaModel(DEFAULT_OLLAMA)
    listed = ollama.listed()
    if listed is not None and ollama.has(listed):
        return ollama, f"auto: Ollama at {ollama.host} has {DEFAULT_OLLAMA}"
    if listed is None:
        why = f"Ollama not running at {ollama.host}"
    else:
        why = f"Ollama at {ollama.host} has no {DEFAULT_OLLAMA}{has_models(listed, limit=4)}"
    pack = PACKS[DEFAULT_PACK]
    if is_present(pack):
        return LlamaCppModel(pack_path(pack), name=f"llamacpp:{DEFAULT_PACK}"), f"auto: {why}, embedded pack present"
    embedded = f"fetch the embedded model with `ph model pull {DEFAULT_PACK}`"
    if listed:
        raise ModelError(f"no model chosen: {why}: name one with --model ollama:{listed[0]} (or set it once with "
                         f"PH_MODEL or the config file, see `ph config`), run `ollama pull {DEFAULT_OLLAMA}`, "
                         f"or {embedded}")
    if listed is not None:
        raise ModelError(f"no model found: {why}: run `ollama pull {DEFAULT_OLLAMA}`, or {embedded}")
    raise ModelError(f"no model found: start Ollama and run `ollama pull {DEFAULT_OLLAMA}`, or {embedded}")
