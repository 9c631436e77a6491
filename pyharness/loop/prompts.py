"""The prompts: one system prompt per mode (fixed for the whole run) and the first task message."""

import ast

from pyharness.actions.base import Action
from pyharness.harness.examples import example_of
from pyharness.workspace.tree import Workspace

SYSTEM = """You are a careful Python developer working in a repository through actions. \
There is no shell: you can only use the actions below. Each reply contains exactly one action; \
its result comes back to you as an Observation, and then you send the next action.

Each reply is one Action line written exactly like the examples below.

Actions:
{actions}

Rules:
- One action per reply. Never write an Observation yourself.
- File content and edit blocks go after the Action line, never inside the JSON.
{look}{rules}"""

SYSTEM_JSON = """You are a careful Python developer working in a repository through actions. \
There is no shell: you can only use the actions below. Each reply is one JSON object that calls one action: \
{{"action": NAME, "args": {{...}}, "body": "..."}}, where "body" (for write and edit only) holds the file's content or \
the edit's new lines. Its result comes back to you as an Observation, and then you send the next action.

Actions:
{actions}

Rules:
- One action per reply. Never write an Observation yourself.
{look}{rules}"""

LOOK_RULE = "- Look before you change: read a file before you edit it.\n"

MODE_RULES = {
    "ask": "- When you know the answer, use answer and cite the file as path:line.",
    "fix": "- Change the code, not the tests. Before an edit, write one Thought line: which line is wrong and why.\n"
           "- After each change the tests run by themselves; when they all pass, the job is done.",
    "add": "- Write a test for the feature in a new file under tests/, implement the feature, run_tests, then done.",
    "run": "- Make the change, run_tests, then done.",
    "stdout": "- Write the whole program to main.py (the program only: no test code in it), check it on the example "
              "with the run_tests action, fix it until it passes, then done.",
}

def system_prompt(mode: str, actions: dict[str, Action], path: str | None = None, protocol: str = "text") -> str:
    """The system prompt of a mode: what each allowed action does, with a literal example of each (protocol=json:
    the examples as the JSON replies that mean the same, and no rule about Action lines)."""
    from pyharness.harness.structured import example_json

    blocks = []
    for action in actions.values():
        example = example_of(mode, action, path)
        blocks.append(f"{action.description}\n{example_json(example) if protocol == 'json' else example}\n")
    look = LOOK_RULE if "read" in actions else ""
    template = SYSTEM_JSON if protocol == "json" else SYSTEM
    return template.format(actions="\n".join(blocks), look=look, rules=MODE_RULES.get(mode, ""))


WHOLE_TREE = 60
"""A tree of at most this many files is shown whole, in name order (as it always was)."""
MAP_FILES = 15
"""A larger tree shows only this many files, the most relevant first (pyharness/localise/filerank.py)."""
MAP_SYMBOLS = 8
"""Names shown per file of a larger tree's map (a small tree's shows 12)."""


def repo_map(ws: Workspace, query: str = "", traceback: str = "", max_files: int = MAP_FILES) -> str:
    """The repo's files, with the top-level functions and classes of each Python file: all of a small tree; of a
    large one the `max_files` files the traceback and task (`query`) point at, then how many more there are."""
    names, per_file = ws.files(), 12
    if len(names) > WHOLE_TREE:
        from pyharness.localise.filerank import rank

        names, per_file = rank(ws, query, traceback, names), MAP_SYMBOLS
    else:
        max_files = WHOLE_TREE
    lines = []
    for name in names[:max_files]:
        entry = name
        if name.endswith(".py"):
            symbols = list(dict.fromkeys(_symbols((ws.root / name).read_text(encoding="utf-8", errors="replace"))))
            if symbols:
                entry += ": " + ", ".join(symbols[:per_file])
        lines.append(entry)
    if len(names) > max_files:
        lines.append(f"... {len(names) - max_files} more files; use search to find code, or list a folder")
    return "\n".join(lines) if lines else "(the repo is empty)"


def _symbols(source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    out = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.append(f"{node.name}()")
        elif isinstance(node, ast.ClassDef):
            out.append(f"class {node.name}")
        elif (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
              and node.targets[0].id.isupper()):
            out.append(node.targets[0].id)
    return out
