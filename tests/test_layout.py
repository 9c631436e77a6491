"""The house (issue 25): the package is wings with no import circle between modules, the wheel installs nothing
named `actions` at the top of site-packages, and a user's action still loads through the entry-point group."""

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
WINGS = {"cli", "export", "evals", "loop", "trials", "localise", "actions", "harness", "workspace", "models"}


def circles(graph: "grimp.ImportGraph") -> list[list[str]]:
    """The import circles among the graph's modules: each strongly connected group of more than one module."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(start: str) -> None:  # Tarjan's algorithm, iterative (the graph is deep enough for recursion limits)
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                elif child in stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_module_imports_one_that_imports_it_back():
    graph = grimp.build_graph("pyharness", cache_dir=None)
    assert "pyharness.actions.base" in graph.modules  # the actions are part of the graph (pyharness/actions)
    assert circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for name in ("p", "p.a", "p.b", "p.c"):
        graph.add_module(name)
    graph.add_import(importer="p.a", imported="p.b")
    graph.add_import(importer="p.b", imported="p.a")
    graph.add_import(importer="p.c", imported="p.a")
    assert circles(graph) == [["p.a", "p.b"]]


def test_the_package_top_level_holds_only_the_wings():
    top = {p.name for p in (ROOT / "pyharness").iterdir() if p.name != "__pycache__"}
    assert top == WINGS | {"__init__.py", "errors.py", "runstate.py"}
    for wing in WINGS:
        doc = (ROOT / "pyharness" / wing / "__init__.py").read_text(encoding="utf-8")
        assert doc.startswith('"""') and len(doc) > 150, f"{wing}/__init__.py says what the wing owns"


def test_the_wheel_installs_the_actions_under_the_package(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for name in ("pyharness", "actions", "demo"):
        shutil.copytree(ROOT / name, source / name, symlinks=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet",
                           "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    [wheel] = (tmp_path / "dist").glob("py_harness-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert {name.split("/")[0] for name in names} == {"pyharness", "py_harness-0.1.0.dist-info"}
    assert {"pyharness/actions/__init__.py", "pyharness/actions/base.py", "pyharness/actions/edit.py"} <= set(names)
    assert not [name for name in names if name.startswith("actions/")]


PLUGIN = '''"""A user's action, installed by its own distribution."""

from pydantic import BaseModel, Field

from pyharness.actions.base import Action, Context, Observation


class Args(BaseModel):
    text: str = Field(description="what to shout")


def run(args: Args, ctx: Context) -> Observation:
    return Observation(args.text.upper() + "!")


ACTION = Action(name="shout", args=Args, run=run, description="shout: say the text louder.",
                example='Action: shout {"text": "hello"}')
'''


def test_a_plugin_action_loads_through_the_entry_point_group(tmp_path):
    (tmp_path / "ph_shout.py").write_text(PLUGIN, encoding="utf-8")
    info = tmp_path / "ph_shout-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ph-shout\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text("[pyharness.actions]\nshout = ph_shout:ACTION\n", encoding="utf-8")
    script = ("import json; from pyharness.actions import CORE, registry; found = registry(); a = found['shout']; "
              "print(json.dumps({'names': sorted(found), 'core': sorted(CORE), "
              "'said': a.run(a.args(text='hi'), None).text}))")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(tmp_path)}, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["said"] == "HI!"
    assert out["names"] == sorted(out["core"] + ["shout"])
