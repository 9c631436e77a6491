"""Where a served model's runs go. `openai:NAME@URL1,URL2,...` and `ollama:NAME@URL1,URL2,...` name one model on
several servers (the runs are spread over them with `--on ray`); each server is checked before the eval and again
when a run on it ends in a model error, and a server that does not answer is taken out.

A record's `model` stays the spec as typed (the server list included), so a stopped eval resumes with the same
command; a server that has gone can stay in the list (the check takes it out again), and the record's `server`
says which server answered each run.
"""

import os
from dataclasses import dataclass

from pyharness.errors import ModelError, UserError
from pyharness.models.base import Model

SERVED = ("openai", "ollama")
"""Backends behind a server: their runs need a slot of a server, not this machine's CPUs for the model."""


@dataclass(frozen=True)
class ModelTarget:
    """A `--model` spec taken apart: the backend, the model's name there, and its servers (served kinds only)."""

    spec: str
    kind: str
    name: str
    servers: tuple[str, ...] = ()


def parse_target(spec: str) -> ModelTarget:
    """The target a spec names; a server list that is not all URLs is a one-line `ModelError`."""
    kind, _, rest = spec.partition(":")
    if kind not in SERVED:
        return ModelTarget(spec, kind, rest)
    name, at, urls = rest.rpartition("@")
    if not at:
        name, urls = rest, ""
    servers = tuple(dict.fromkeys(u.strip().rstrip("/") for u in urls.split(",") if u.strip()))
    bad = [u for u in servers if not u.startswith(("http://", "https://"))]
    if at and (bad or not servers):
        raise ModelError(f"{spec}: after @ comes a server URL, or several separated by commas, e.g. "
                         f"{kind}:{name or 'NAME'}@http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1")
    if not name:
        raise ModelError(f"{kind} needs a model name: --model {kind}:NAME or {kind}:NAME@URL1,URL2")
    return ModelTarget(spec, kind, name, servers or (default_server(kind),))


def default_server(kind: str) -> str:
    """The server a served spec without @URL talks to: OPENAI_BASE_URL / OLLAMA_HOST, else the backend's default."""
    if kind == "openai":
        from pyharness.models.openai import DEFAULT_BASE_URL

        return (os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
    from pyharness.models.ollama import DEFAULT_HOST

    return (os.environ.get("OLLAMA_HOST") or DEFAULT_HOST).rstrip("/")


def server_model(target: ModelTarget, url: str, api_key: str | None = None) -> Model:
    """The target's model on one of its servers."""
    if target.kind == "openai":
        from pyharness.models.openai import OpenAIModel

        return OpenAIModel(target.name, url, api_key=api_key)
    from pyharness.models.ollama import OllamaModel

    return OllamaModel(target.name, host=url)


def server_problem(target: ModelTarget, url: str) -> str:
    """'' when the server answers and serves the model; else its one-line reason (never raises)."""
    try:
        server_model(target, url).check()
    except ModelError as err:
        return str(err)
    return ""


def plain_model(spec: str) -> Model:
    """A spec's model for the plain runner: one server at most (a server list is what `--on ray` spreads)."""
    from pyharness.models.resolve import resolve_model

    target = parse_target(spec)
    if target.kind in SERVED and "@" in spec.partition(":")[2]:
        if len(target.servers) > 1:
            raise UserError(f"{spec} names {len(target.servers)} servers: spreading runs over servers needs "
                            "--on ray (pip install 'py-harness[scale]'); or name one server")
        return server_model(target, target.servers[0])
    return resolve_model(spec)
