"""Every text the loop sends the model, in one place: the system prompt of each mode (fixed for the whole run), the
first task message (with the repo map and, in fix mode, the code the failing test calls), and the words around each
observation (an error, a format error, a hint, the tests after a change). The trials' requests are in
`pyharness.trials.prompts`; an action's own errors stay with the rule that raises them."""

import ast
import re

from pyharness.actions.base import Action
from pyharness.harness.examples import example_of
from pyharness.harness.structured import JSON_REMINDER, example_json
from pyharness.localise.filerank import focus
from pyharness.localise.linetrace import RunTrace
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
    blocks = []
    for action in actions.values():
        example = example_of(mode, action, path)
        blocks.append(f"{action.description}\n{example_json(example) if protocol == 'json' else example}\n")
    look = LOOK_RULE if "read" in actions else ""
    template = SYSTEM_JSON if protocol == "json" else SYSTEM
    return template.format(actions="\n".join(blocks), look=look, rules=MODE_RULES.get(mode, ""))


FIX_ASK = "Which line is wrong? Write one Thought line that names it and says why, then the edit of that line."
TESTS_PASS = "The tests pass. If the task is complete, use done."
"""After a green test run in a mode whose rule the harness cannot check alone (ask, run)."""
NOT_RUN = "(not run: the time budget ended this reply)"
CALLED = re.compile(r"\b([A-Za-z_]\w*)\(")


def ask_task(task: str, files: str) -> str:
    return (f"Question: {task}\n\nRepository files:\n{files}\n\nFind the answer in the code (search or read), then "
            "use answer and cite the file as path:line.")


def fix_task(task: str, first_run: str, related: str, files: str) -> str:
    """The first message of a fix: the failing test run, the code it calls, the repo map, and which line."""
    extra = f"\nAlso: {task}" if task else ""
    return (f"The tests fail. Fix the code so that they pass; do not change the tests.{extra}\n\n{first_run}\n\n"
            f"{related}Repository files:\n{files}\n\n{FIX_ASK}")


def add_task(task: str, files: str) -> str:
    return (f"Feature to add: {task}\n\nSteps: write a test for it in a new file under tests/, implement it, "
            f"run_tests, then done.\n\nRepository files:\n{files}")


def run_task(task: str, files: str) -> str:
    return f"Task: {task}\n\nWhen the change is made, run_tests, then done.\n\nRepository files:\n{files}"


def observation_message(text: str, hint: str = "") -> str:
    """The user message that follows a reply: what its action did, and a hint when the harness has one."""
    return f"Observation: {text}" + (f"\n\nHint: {hint}" if hint else "")


def format_error(err: str, json_protocol: bool) -> str:
    return f"Format error: {err}{JSON_REMINDER if json_protocol else ''}"


def after_change(said: str, tests: str) -> str:
    """A change's observation with the test run the harness made after it."""
    return f"{said}\nTests after this change: {tests}"


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


def related_source(ws: Workspace, traceback: str, limit: int = 2, ran: RunTrace | None = None) -> str:
    """The code the failing test calls: functions named in the traceback, from non-test files, numbered.

    With `ran` (a trace of the failing test), the lines that ran are marked `>` (where the test went), and
    under each branch condition that ran come the values it saw and what it came to.
    """
    names = list(dict.fromkeys(CALLED.findall(traceback)))
    shown = []
    for rel in focus(ws, traceback, extra=list(ran.lines) if ran else []):
        source = (ws.root / rel).read_text(encoding="utf-8", errors="replace")
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        lines = source.splitlines()
        constants = {
            t.id: node.lineno
            for node in tree.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            if isinstance(t, ast.Name)
        }
        for node in tree.body:
            if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in names:
                start, end = node.lineno, min(node.end_lineno or node.lineno, node.lineno + 30)
                used = sorted(
                    {constants[n.id] for n in ast.walk(node) if isinstance(n, ast.Name) and n.id in constants}
                )
                numbered = [*used, *range(start, end + 1)]
                marks = ran.lines.get(rel, set()) if ran else set()
                notes = ran.notes.get(rel, {}) if ran else {}
                body = "\n".join(
                    f"{n:>3}{'>' if n in marks else '|'} {lines[n - 1]}"
                    + (f"\n     (in the failing test: {notes[n]})" if n in notes and n in marks else "")
                    for n in numbered
                )
                if marks & set(range(start, end + 1)):
                    body += "\n(lines marked > ran in the failing test)"
                rank = (isinstance(node, ast.ClassDef), names.index(node.name))
                shown.append((rank, f"{node.name} is defined in {rel} (lines {start}-{end}):\n{body}\n\n"))
    if any(not is_class for (is_class, _), _ in shown):  # a class named in a repr is data, not the suspect
        shown = [item for item in shown if not item[0][0]]
    return "".join(text for _, text in sorted(shown)[:limit])
