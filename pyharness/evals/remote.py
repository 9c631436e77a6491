"""One run as a Ray worker does it (`ph eval --on ray`): the run's model built from the recipe the driver sent, the
task's folder found (or unpacked from its bundle on another machine), the sandbox as the command said, and then
`runner.perform`, exactly as the plain runner does it. The record and the transcript go back to the driver, which
alone writes them.

A worker process keeps the models it built: an embedded model is loaded once per worker process and reused by that
worker's later runs (the Ray task asked for its threads' CPUs), and a served model's client is kept per server.
"""

import os
import socket
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pyharness.errors import ModelError, UserError
from pyharness.evals.records import RunOutput
from pyharness.evals.runner import EvalPlan, RunSpec, perform
from pyharness.evals.servers import SERVED, ModelTarget
from pyharness.models.base import Model

_KEPT: dict[tuple, Model] = {}
"""This worker process's models, kept across its runs: (spec, server or threads) -> model."""


@dataclass(frozen=True)
class ModelRecipe:
    """How a worker builds one run's model; the driver fills in what only it knows."""

    spec: str
    kind: str
    name: str = ""
    server: str = ""
    """Served kinds: the base URL of the server the driver gave this run a slot of."""
    api_key: str | None = None
    """openai: the driver's OPENAI_API_KEY (a worker on another machine does not have it)."""
    threads: int = 0
    """llamacpp: threads, and the CPUs the Ray task asked for."""
    script: tuple[list[str], list[Any] | None] | None = None
    """scripted: the replies (and infills) the driver read for this run's task."""
    problem: str = ""
    """A model error the driver met building the recipe (e.g. no replies file for the task): the run records it."""


class Recipes:
    """The driver's side: a recipe per run (scripted replies read once per file), each spec checked up front."""

    def __init__(self, targets: dict[str, ModelTarget], threads: int):
        self.targets, self.threads = targets, threads
        self.scripts: dict[Path, tuple] = {}
        for target in targets.values():
            _validate(target)

    def recipe(self, run: RunSpec, server: str) -> ModelRecipe:
        """How the worker builds this run's model (`server`: the URL of the slot the run got, for a served model)."""
        target = self.targets[run.model]
        if target.kind == "llamacpp":
            return ModelRecipe(run.model, target.kind, target.name, threads=self.threads)
        if target.kind in SERVED:
            key = os.environ.get("OPENAI_API_KEY") if target.kind == "openai" else None
            return ModelRecipe(run.model, target.kind, target.name, server=server, api_key=key)
        if target.kind != "scripted":
            return ModelRecipe(run.model, target.kind, target.name)
        path = Path(target.name)
        if path.is_dir():
            path = path / f"{run.task.id}.json"
            if not path.is_file():
                return ModelRecipe(run.model, "scripted", problem=f"no scripted replies for task {run.task.id} in "
                                                                  f"{path.parent} (expected {path.name})")
        try:
            script = self.scripts[path] if path in self.scripts else self.scripts.setdefault(path, _script(path))
        except ModelError as err:
            return ModelRecipe(run.model, "scripted", problem=str(err))
        return ModelRecipe(run.model, "scripted", str(path), script=script)


def _validate(target: ModelTarget) -> None:
    """A spec the workers could not build is a one-line error before any run (as the plain runner's `Models`)."""
    if target.kind == "scripted":
        if not target.name:
            raise ModelError("scripted needs a file: --model scripted:replies.json")
        if not Path(target.name).is_dir():
            _script(Path(target.name))
    elif target.kind not in (*SERVED, "llamacpp"):
        from pyharness.models.resolve import resolve_model

        resolve_model(target.spec)  # raises the unknown-spec message


def _script(path: Path) -> tuple:
    from pyharness.models.scripted import load_script

    return load_script(path)


class RecipeModels:
    """The runner's model source on a worker: one recipe, one run."""

    def __init__(self, recipe: ModelRecipe):
        self.recipe = recipe

    def for_run(self, spec: str, task_id: str) -> Model:
        """The run's model: a fresh scripted model, else the one this worker process keeps for the recipe."""
        r = self.recipe
        if r.problem:
            raise ModelError(r.problem)
        if r.kind == "scripted":
            from pyharness.models.scripted import ScriptedModel

            replies, infills = r.script or ([], None)
            model = ScriptedModel(replies=replies, infills=infills)
            model.name = f"scripted:{r.name}" if r.name else spec  # as the plain runner names it: the file read
            return model
        key = (r.spec, r.server or r.threads)
        if key not in _KEPT:
            _KEPT[key] = _build(r)
        return _KEPT[key]


def _build(r: ModelRecipe) -> Model:
    if r.kind == "llamacpp":
        from pyharness.models.llamacpp import LlamaCppModel
        from pyharness.models.packs import DEFAULT_PACK, resolve_pack_spec

        target = r.name or DEFAULT_PACK
        return LlamaCppModel(resolve_pack_spec(target), name=f"llamacpp:{target}", threads=r.threads or None)
    if r.server:
        from pyharness.evals.servers import parse_target, server_model

        return server_model(parse_target(r.spec), r.server, api_key=r.api_key)
    from pyharness.models.resolve import resolve_model

    return resolve_model(r.spec)


@dataclass(frozen=True)
class Shipped:
    """Task folders packed by the driver (for workers on other machines): folder path -> (sha256, object ref)."""

    bundles: dict[str, tuple[str, Any]] = field(default_factory=dict)


def execute(plan: EvalPlan, run: RunSpec, recipe: ModelRecipe, sandbox_on: bool, shipped: Shipped) -> RunOutput:
    """The body of one run's Ray task."""
    from pyharness.workspace import sandbox

    if sandbox_on:
        try:
            sandbox.check()
        except RuntimeError as err:
            raise UserError(f"the sandbox cannot run on {socket.gethostname()}: {err}") from None
    models = RecipeModels(recipe)
    if recipe.kind == "llamacpp":  # loaded now, once per worker process: a node without the pack stops the eval
        try:
            models.for_run(run.model, run.task.id).load()
        except ModelError as err:
            raise UserError(f"on {socket.gethostname()}: {err}") from None
    run = replace(run, task=_local_task(run, shipped))
    with sandbox.override(sandbox_on):
        return perform(plan, run, models)


def _local_task(run: RunSpec, shipped: Shipped):
    """The run's task with its folder on this machine: the driver's path, or its bundle unpacked here."""
    from pyharness.evals.bundles import relocate, task_folder, unpack

    folder = task_folder(run.task)
    if folder is None or str(folder) not in shipped.bundles:
        return run.task
    import ray

    digest, ref = shipped.bundles[str(folder)]
    return relocate(run.task, unpack(digest, lambda: ray.get(ref)))
