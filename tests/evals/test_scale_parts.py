"""The parts of `ph eval --on ray` that need no Ray (issue 26): server lists, the worker's model recipes and the task
folders packed for workers on other machines."""

import shutil

import pytest
from scalekit import FIX, FIXED, write_job, write_replies

from pyharness.errors import ModelError
from pyharness.evals.bundles import pack, relocate, task_folder, unpack
from pyharness.evals.configs import parse_configs
from pyharness.evals.remote import ModelRecipe, RecipeModels, Recipes
from pyharness.evals.runner import EvalPlan, Models, RunSpec, perform
from pyharness.evals.servers import parse_target
from pyharness.evals.suites import load_suite
from pyharness.evals.tasks import JobTask


def test_a_server_list_is_one_model_on_several_servers():
    target = parse_target("openai:qwen@http://a:8000/v1/,http://b:8000/v1, http://a:8000/v1")
    assert (target.kind, target.name, target.servers) == ("openai", "qwen", ("http://a:8000/v1", "http://b:8000/v1"))
    ollama = parse_target("ollama:qwen2.5-coder:7b@http://h1:11434,http://h2:11434")
    assert (ollama.name, ollama.servers) == ("qwen2.5-coder:7b", ("http://h1:11434", "http://h2:11434"))
    assert parse_target("openai:qwen").servers == ("http://localhost:8000/v1",)
    assert parse_target("llamacpp:qwen2.5-coder-1.5b").servers == ()
    with pytest.raises(ModelError, match="openai needs a model name"):
        parse_target("openai:@http://a/v1")


def test_a_worker_keeps_its_served_and_embedded_models_and_gives_each_scripted_run_a_fresh_one(tmp_path):
    served = ModelRecipe("openai:qwen@http://a/v1,http://b/v1", "openai", "qwen", server="http://b/v1", api_key="k")
    first, second = RecipeModels(served).for_run(served.spec, "t1"), RecipeModels(served).for_run(served.spec, "t2")
    assert first is second and (first.base_url, first.api_key) == ("http://b/v1", "k")
    other = RecipeModels(ModelRecipe(served.spec, "openai", "qwen", server="http://a/v1")).for_run(served.spec, "t1")
    assert other is not first and other.base_url == "http://a/v1"
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"GGUF")  # built, never loaded: loading is the first run's (`remote.execute`)
    embedded = ModelRecipe(f"llamacpp:{weights}", "llamacpp", str(weights), threads=2)
    kept = RecipeModels(embedded).for_run(embedded.spec, "t1")
    assert kept is RecipeModels(embedded).for_run(embedded.spec, "t2") and (kept.threads, kept.loaded) == (2, False)
    scripted = ModelRecipe("scripted:x", "scripted", script=(["one", "two"], None))
    a, b = (RecipeModels(scripted).for_run("scripted:x", "t") for _ in range(2))
    assert a is not b and a.replies == ["one", "two"] and a.name == "scripted:x"
    with pytest.raises(ModelError, match="no scripted replies"):
        RecipeModels(ModelRecipe("scripted:d", "scripted", problem="no scripted replies for t")).for_run("s", "t")


def test_the_driver_reads_scripted_replies_for_each_task_and_names_a_missing_file(tmp_path):
    suite = load_suite(str(write_job(tmp_path / "mine", FIX).parent))
    spec = f"scripted:{write_replies(tmp_path / 'replies', {'calc_fix': [FIXED]})}"
    recipes = Recipes({spec: parse_target(spec)}, threads=2)
    run = RunSpec(0, suite.tasks[0], spec, parse_configs(None)[0], 0)
    recipe = recipes.recipe(run, "")
    assert (recipe.script, recipe.name) == (([FIXED], None), str(tmp_path / "replies" / "calc_fix.json"))
    assert RecipeModels(recipe).for_run(spec, "calc_fix").name == f"scripted:{tmp_path / 'replies' / 'calc_fix.json'}"
    missing = RunSpec(1, JobTask("other", FIX, tmp_path, None), spec, parse_configs(None)[0], 0)
    assert recipes.recipe(missing, "").problem == \
        f"no scripted replies for task other in {tmp_path / 'replies'} (expected other.json)"
    with pytest.raises(ModelError, match="cannot read scripted replies"):
        Recipes({"scripted:nope.json": parse_target("scripted:nope.json")}, threads=2)


def test_a_packed_job_folder_runs_where_it_was_unpacked_after_the_original_is_gone(tmp_path):
    suite_dir = tmp_path / "mine"
    write_job(suite_dir, FIX)
    [task] = load_suite(str(suite_dir)).tasks
    digest, data = pack(task_folder(task))
    assert pack(task_folder(task)) == (digest, data)  # the same folder packs to the same bytes
    shutil.rmtree(suite_dir)  # the worker's machine does not have the driver's disk
    fetched = []
    home = tmp_path / "bundles"
    here = unpack(digest, lambda: fetched.append(1) or data, into=home)
    assert unpack(digest, lambda: fetched.append(1) or data, into=home) == here and fetched == [1]  # once a machine
    moved = relocate(task, here)
    assert (moved.root, moved.source) == (here, here / "repo")
    spec = f"scripted:{write_replies(tmp_path / 'replies', {'calc_fix': [FIXED]})}"
    plan = EvalPlan("mine", [moved], [spec], parse_configs(["protocol=oneshot"]))
    output = perform(plan, RunSpec(0, moved, spec, plan.configs[0], 0), Models([spec]))
    assert (output.record["pass_strict"], output.record["note"]) == (True, "tests/test_ops.py: 3 passed")
    with pytest.raises(ValueError, match="arrived damaged"):
        unpack("0" * 64, lambda: data, into=home)
