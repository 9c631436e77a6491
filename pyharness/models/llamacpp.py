"""`llamacpp:PACK_OR_PATH`: a GGUF model in process through llama-cpp-python, prefix cache kept warm."""

import json
import math
import os
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from pyharness.errors import InfillUnsupported, ModelError
from pyharness.models.base import ChatOptions, Infill, InfillOptions, Model, Reply
from pyharness.models.streaming import read_stream

FIM_MARKERS = ("<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>")
"""Qwen2.5-Coder's fill-in-the-middle tokens: `<|fim_prefix|>{prefix}<|fim_suffix|>{suffix}<|fim_middle|>`."""
REPO_MARKERS = ("<|repo_name|>", "<|file_sep|>")
"""Its repository-level tokens: `<|repo_name|>{name}\n<|file_sep|>{path}\n{text}\n...<|file_sep|>{path}\n` and then
the FIM prompt of the last file, so an infill can see other files (the failing test) before the hole's own."""

_LOADED: dict[tuple[str, int], object] = {}
"""One loaded model per (path, context): the demo's four jobs and an eval's tasks share it and its cache."""


class LlamaCppModel(Model):
    """A local GGUF model; a turn that extends the previous prompt re-reads only its new tokens."""

    prefill = True

    def __init__(self, path: Path, name: str, context_window: int = 8192, threads: int | None = None):
        self.path = Path(path)
        self.name = name
        self.context_window = context_window
        self.threads = threads or max(1, os.cpu_count() or 1)
        self._llm = None
        self._formatter = None
        self._grammars: dict[str, object] = {}
        self._fim_ids: tuple[int, int, int] | None = None
        self._fim: bool | None = None

    @property
    def loaded(self) -> bool:
        """True once this model's weights are in memory (the first turn, or `load`, reads them)."""
        return self._llm is not None

    def load(self) -> None:
        """Read the weights now (seconds to minutes); at once when they are already in memory."""
        self._load()

    def _load(self):
        if self._llm is not None:
            return self._llm
        try:
            import llama_cpp
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
        except ImportError:
            raise ModelError("llama-cpp-python is not installed: run `pip install 'py-harness[local]'` "
                             "(it builds from source, ~6 minutes on 2 cores)") from None
        key = (str(self.path), self.context_window)
        if key not in _LOADED:
            if not self.path.is_file():
                raise ModelError(f"model file {self.path} not found: run `ph model pull`")
            try:
                _LOADED[key] = llama_cpp.Llama(model_path=str(self.path), n_ctx=self.context_window,
                                               n_threads=self.threads, n_batch=512, seed=0, verbose=False)
            except (ValueError, RuntimeError) as err:
                raise ModelError(f"llama.cpp could not load {self.path.name}: {err}; "
                                 "run `ph model pull` to fetch a verified copy") from None
        llm = _LOADED[key]
        template = llm.metadata.get("tokenizer.chat_template") or CHATML
        eos = llm.detokenize([llm.token_eos()]).decode("utf-8", errors="ignore")
        bos = llm.detokenize([llm.token_bos()]).decode("utf-8", errors="ignore") if llm.token_bos() >= 0 else ""
        self._formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos)
        self._llm = llm
        return llm

    def chat(self, messages: list[dict], options: ChatOptions) -> Reply:
        """Generate one reply; reports how much of the prompt came from the prefix cache."""
        llm = self._load()
        started = time.monotonic()
        formatted = self._formatter(messages=messages)
        tokens = llm.tokenize((formatted.prompt + options.prefix).encode("utf-8"), add_bos=False, special=True)
        budget = self.context_window - len(tokens)
        if budget < 16:
            raise ModelError(f"the prompt ({len(tokens)} tokens) fills the model's context ({self.context_window}); "
                             "the run is too long for this model")
        cached = _common_prefix(list(llm._input_ids[:llm.n_tokens]), tokens)
        stop = [s for s in [*options.stop, *(formatted.stop or [])] if isinstance(s, str) and s]
        stream = llm.create_completion(prompt=tokens, max_tokens=min(options.max_tokens, budget),
                                       temperature=options.temperature, seed=options.seed, stop=stop or None,
                                       stream=True, grammar=self._grammar(options.schema))

        def pieces() -> Iterator[tuple[str, str | None]]:
            try:
                for chunk in stream:
                    choice = chunk["choices"][0]
                    yield choice.get("text") or "", choice.get("finish_reason")
            finally:
                stream.close()  # an early end stops generation now: the rest would be a plan the harness will not run

        with closing(pieces()) as chunks:
            read = read_stream(chunks, options)  # llama.cpp applies the stop sequences itself
        written = read.text[len(options.prefix):]
        return Reply(text=read.text, prompt_tokens=len(tokens), cached_tokens=min(cached, len(tokens) - 1),
                     completion_tokens=self.count_tokens(written) if written else 0,
                     finish_reason="length" if read.finish == "length" and not read.early else "stop",
                     seconds=time.monotonic() - started, stopped_early=read.early)

    @property
    def fim(self) -> bool:
        """True for a coder model whose tokenizer has Qwen's fill-in-the-middle tokens (Qwen2.5-Coder; Qwen2.5's
        general models have the tokens but were not trained on them). Reads the model if it is not loaded yet."""
        if self._fim is None:
            llm = self._load()
            ids = _fim_ids(llm)
            self._fim_ids = ids
            self._fim = ids is not None and _names_a_coder(llm, self.path)
        return self._fim

    def infill(self, prefix: str, suffix: str, options: InfillOptions) -> Infill:
        """Fill the hole with the model's FIM tokens, through the raw token loop (no chat template). The prompt
        starts with `<|fim_prefix|>` and the prefix, so infills that share a prefix re-read only what follows it."""
        if not self.fim:
            raise InfillUnsupported(f"{self.name} is not a fill-in-the-middle model (Qwen2.5-Coder's "
                                    f"{FIM_MARKERS[0]} tokens); frame the hole as a chat turn instead")
        llm = self._load()
        started = time.monotonic()
        start, hole, middle = self._fim_ids
        tokens = [*self._repo_tokens(options), start, *self._text_tokens(prefix), hole, *self._text_tokens(suffix),
                  middle]
        budget = self.context_window - len(tokens)
        if budget < 16:
            raise ModelError(f"the infill prompt ({len(tokens)} tokens) fills the model's context "
                             f"({self.context_window}); give it fewer lines around the hole")
        cached = _common_prefix(list(llm._input_ids[:llm.n_tokens]), tokens)
        stops = [s.encode("utf-8") for s in options.stop if s]
        eog = _eog_test(llm)
        # Not create_completion(logprobs=...): that needs logits_all=True, a scores buffer of n_ctx x n_vocab floats
        # (8192 x 151,936: 5 GB) and logits for every prompt token. generate() is the loop create_completion runs,
        # with the same samplers and the same reuse of the longest common token prefix (no reset when it matches);
        # each sampled token's log-probability is read from the logits it was sampled from.
        llm.set_seed(options.seed)
        stream = llm.generate(tokens, temp=options.temperature)
        made: list[int] = []
        logprobs: list[float] = []
        data, finish = b"", "length"
        try:
            for token in stream:
                logprobs.append(_token_logprob(llm, token))
                if eog(token):
                    finish = "stop"
                    break
                made.append(token)
                data = llm.detokenize(made, prev_tokens=tokens)
                cut = min((i for s in stops if (i := data.find(s)) >= 0), default=None)
                if cut is not None:
                    data, finish = data[:cut], "stop"
                    break
                if len(made) >= min(options.max_tokens, budget):
                    break
        finally:
            stream.close()
        return Infill(text=data.decode("utf-8", errors="replace"), prompt_tokens=len(tokens),
                      cached_tokens=min(cached, len(tokens) - 1), completion_tokens=len(logprobs),
                      seconds=time.monotonic() - started,
                      logprob=sum(logprobs) / len(logprobs) if logprobs else None, finish_reason=finish)

    def _repo_tokens(self, options: InfillOptions) -> list[int]:
        """The other files of `options` and the hole's path in the repository-level format ([] without files, or
        when the vocabulary lacks the markers)."""
        ids = _marker_ids(self._llm, REPO_MARKERS) if options.files else None
        if ids is None:
            return []
        repo, sep = ids
        return repo_layout(repo, sep, self._text_tokens, options.files, options.path)

    def _text_tokens(self, text: str) -> list[int]:
        """`text` as plain text: a marker written in the code stays text, never becomes a control token."""
        if not text:
            return []
        return self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def _grammar(self, schema: dict | None):
        """The llama.cpp grammar that holds generation to `schema` (built once per schema), or None."""
        if schema is None:
            return None
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def count_tokens(self, text: str) -> int:
        """Exact token count with the model's own tokenizer."""
        llm = self._load()
        return len(llm.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def _fim_ids(llm) -> tuple[int, int, int] | None:
    """The token ids of the three FIM markers, or None unless each is one token of the vocabulary."""
    ids = _marker_ids(llm, FIM_MARKERS)
    return (ids[0], ids[1], ids[2]) if ids else None


def _marker_ids(llm, markers: tuple[str, ...]) -> list[int] | None:
    """The token id of each marker, or None unless each is one token of the vocabulary."""
    ids = []
    for marker in markers:
        found = llm.tokenize(marker.encode("utf-8"), add_bos=False, special=True)
        if len(found) != 1:
            return None
        ids.append(found[0])
    return ids


def repo_layout(repo: int, sep: int, text_tokens, files: tuple[tuple[str, str], ...], path: str) -> list[int]:
    """`<|repo_name|>repo\n`, each file as `<|file_sep|>path\ntext\n`, then `<|file_sep|>path\n` of the hole's file
    (its FIM prompt follows): the order Qwen2.5-Coder was trained on for repository-level infilling."""
    tokens = [repo, *text_tokens("repo\n")]
    for name, text in files:
        tokens += [sep, *text_tokens(f"{name}\n{text.rstrip()}\n")]
    return [*tokens, sep, *text_tokens(f"{path or 'main.py'}\n")]


def _names_a_coder(llm, path: Path) -> bool:
    names = [llm.metadata.get("general.name", ""), llm.metadata.get("general.basename", ""), path.name]
    return any("coder" in str(name).lower() for name in names)


def _eog_test(llm):
    """`token -> bool`: does this token end generation (end of text, or a marker such as `<|file_sep|>`)?"""
    import llama_cpp

    vocab = llm._model.vocab
    return lambda token: bool(llama_cpp.llama_vocab_is_eog(vocab, token))


def _token_logprob(llm, token: int) -> float:
    """log p(token) under the logits it was just sampled from (the last evaluated position's, as the sampler read)."""
    import numpy as np

    logits = np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),))
    top = float(logits.max())
    return float(logits[token]) - top - math.log(float(np.exp(logits - top).sum()))


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


CHATML = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
          "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
