"""rank: with 30+ actions, BM25 puts the relevant one in the top 3 for each of a dozen task texts."""

import pytest
from pydantic import BaseModel

from pyharness.actions import CORE
from pyharness.actions.base import Action, Observation
from pyharness.harness.rank import choose, rank


class NoArgs(BaseModel):
    pass


def make(name: str, description: str, *aliases: str) -> Action:
    return Action(name=name, args=NoArgs, run=lambda a, c: Observation(""), description=f"{name}: {description}",
                  example=f"Action: {name} {{}}", aliases=aliases)


SYNTHETIC = [
    make("format_code", "reformat Python source files with the project's code formatter (black style)", "black"),
    make("sort_imports", "sort and group the import statements at the top of Python modules", "isort"),
    make("type_check", "run the static type checker (mypy) and report type errors", "mypy"),
    make("lint", "run the linter and list style problems and unused imports", "ruff", "flake8"),
    make("coverage", "measure test coverage and list the lines no test executes"),
    make("profile", "profile a function and report where the time is spent"),
    make("benchmark", "time a function over many runs and print the median duration"),
    make("dependency_add", "add a package dependency to pyproject.toml", "add_dependency"),
    make("dependency_list", "list the installed packages and their versions", "pip_list"),
    make("git_log", "show the recent commit history of the repository"),
    make("git_diff", "show the uncommitted changes as a unified diff"),
    make("git_blame", "show which commit last changed each line of a file"),
    make("rename_symbol", "rename a function, class or variable everywhere it is used", "refactor_rename"),
    make("extract_function", "move a block of code into a new function"),
    make("docstring", "write or update the docstring of a function or class"),
    make("changelog", "add an entry to the CHANGELOG file describing a change"),
    make("translate_strings", "translate user-facing message strings for localisation (i18n)"),
    make("sql_query", "run a read-only SQL query against the development database"),
    make("http_get", "fetch a URL from the local development server and show the response"),
    make("env_show", "show configuration values and environment settings (secrets hidden)"),
    make("todo_list", "list TODO and FIXME comments in the code"),
    make("license_check", "check the licenses of the dependencies"),
    make("security_scan", "scan the code for common security problems such as hard-coded passwords"),
    make("complexity", "report the cyclomatic complexity of each function"),
    make("dead_code", "find functions and classes that are never used"),
    make("spell_check", "check spelling in comments, docstrings and documentation"),
    make("notebook_run", "execute a Jupyter notebook and report cell errors"),
    make("docs_build", "build the documentation site with sphinx and report warnings"),
    make("migration_create", "create a database schema migration for model changes"),
    make("regex_test", "try a regular expression against sample strings"),
    make("json_validate", "validate a JSON file against its JSON schema"),
    make("yaml_lint", "check YAML configuration files for syntax errors"),
]

CASES = [
    ("the imports in orders/core.py are in a messy order, sort them", "sort_imports"),
    ("fix the type errors that mypy reports in the pricing module", "type_check"),
    ("which lines of tax.py are not covered by any test?", "coverage"),
    ("the report is slow: find where the time is spent", "profile"),
    ("add requests as a dependency of the project", "dependency_add"),
    ("what changed in the last few commits?", "git_log"),
    ("rename the function calc_total to order_total everywhere", "rename_symbol"),
    ("write a docstring for the Inventory class", "docstring"),
    ("are there hard-coded passwords anywhere in the code?", "security_scan"),
    ("find functions that are never used so we can delete them", "dead_code"),
    ("the sphinx documentation build prints warnings, look at them", "docs_build"),
    ("check that config/settings.json matches its JSON schema", "json_validate"),
    ("list the TODO comments left in the code", "todo_list"),
]


def test_synthetic_set_is_large_enough():
    assert len(SYNTHETIC) >= 30
    assert len({a.name for a in SYNTHETIC}) == len(SYNTHETIC)


@pytest.mark.parametrize(("task", "wanted"), CASES)
def test_relevant_action_in_top_three(task, wanted):
    top = [name for name, _ in rank(SYNTHETIC, task)[:3]]
    assert wanted in top, (task, top)


def test_ranking_is_deterministic_and_ties_keep_order():
    assert rank(SYNTHETIC, "sort imports") == rank(SYNTHETIC, "sort imports")
    unrelated = rank(SYNTHETIC, "zzz qqq")
    assert [name for name, _ in unrelated] == [a.name for a in SYNTHETIC]


def test_choose_keeps_core_and_adds_only_matching_extras():
    core = [CORE["read"], CORE["edit"]]
    chosen = choose(core, SYNTHETIC, "rename the function calc_total everywhere", shown=3)
    assert chosen[:2] == core
    assert "rename_symbol" in [a.name for a in chosen[2:]]
    assert len(chosen) <= 5
    assert choose(core, SYNTHETIC, "zzz qqq") == core
