"""repair: load argument text, resolve the action name, rename keys, place positional arguments and the body."""

import ast
import json
import re
from dataclasses import dataclass

import json_repair

from pyharness.errors import FormatError
from pyharness.harness.call import ActionSpec, RawCall

# key -> the argument it usually means; applied only when the action has that argument and not the key.
SYNONYMS: dict[str, tuple[str, ...]] = {
    "path": (
        "file",
        "filename",
        "file_name",
        "filepath",
        "file_path",
        "fname",
        "target_file",
        "path_to_file",
        "filepath_",
        "location",
        "dir",
        "directory",
        "folder",
        "module",
    ),
    "content": (
        "contents",
        "code",
        "text",
        "body",
        "data",
        "source",
        "file_content",
        "file_contents",
        "new_content",
        "program",
        "source_code",
    ),
    "pattern": ("query", "regex", "search", "term", "text", "keyword", "string", "needle", "search_term"),
    "text": ("answer", "content", "response", "message", "result", "final_answer", "output"),
    "summary": ("message", "reason", "text", "result", "description", "explanation"),
    "target": ("test", "tests", "path", "node", "node_id", "file", "test_file", "test_path", "args"),
    "search": ("old", "old_str", "old_string", "old_text", "find", "original", "before", "search_text"),
    "replace": ("new", "new_str", "new_string", "new_text", "replacement", "after", "replace_text", "updated"),
    "body": ("diff", "patch", "blocks", "changes", "edits"),
    "line": ("line_number", "lineno", "line_no"),
    "start": ("start_line", "line_start", "from_line", "first_line", "offset", "line"),
    "end": ("end_line", "line_end", "to_line", "last_line"),
}
PLACEHOLDERS = re.compile(
    r"^\s*(?:<[\w ]+>|#\s*the complete program|#\s*your code here|\.\.\.|NAME|ACTION)\s*$", re.IGNORECASE
)


def snake(key: str) -> str:
    """camelCase and kebab-case to snake_case."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", key).lower().replace("-", "_").strip()


def resolve_name(raw: str, actions: dict[str, ActionSpec], fixes: list) -> ActionSpec:
    """Map what the model called the action to a known action, or raise a FormatError naming the choices."""
    name = snake(raw.split(".")[-1].strip("`*\"' "))
    if name in actions:
        return actions[name]
    for action in actions.values():
        if name in action.aliases:
            fixes.append(("repair.alias", f"{raw} -> {action.name}"))
            return action
    choices = ", ".join(actions)
    if PLACEHOLDERS.match(raw) or raw.startswith("<"):
        raise FormatError(f"'{raw}' is a placeholder, not an action. Use one of: {choices}.")
    raise FormatError(f"unknown action '{raw}'. Use one of: {choices}.")


def repair(raw: RawCall, action: ActionSpec, fixes: list) -> dict:
    """Arguments keyed by the action's own field names, with positional arguments and the body put in place."""
    fields = list(action.args.model_fields)
    args: dict = {}
    for key, value in raw.args.items():
        if not isinstance(key, str):
            continue
        target = _target(key, fields, raw.args)
        if target is None or value is None and "None" not in str(action.args.model_fields[target].annotation):
            fixes.append(("repair.drop_key", key))  # unknown, or null where a value is required (the default applies)
            continue
        if value is None:
            continue
        if target != key:
            fixes.append(("repair.rename_key", f"{key} -> {target}"))
        args.setdefault(target, value)
    positional_fields = [f for f in fields if f not in ("body", "search", "replace") or action.body_arg != f]
    for value in raw.positional:
        free = next((f for f in positional_fields if f not in args), None)
        if free is not None:
            args[free] = value
    if action.body_arg and raw.body is not None and not _given(args.get(action.body_arg)):
        args[action.body_arg] = raw.body
    for key, value in list(args.items()):
        coerced = _coerce(value, action.args.model_fields[key].annotation)
        if coerced is not value:
            fixes.append(("repair.coerce", key))
            args[key] = coerced
    content = args.get(action.body_arg) if action.body_arg else None
    if isinstance(content, str) and PLACEHOLDERS.match(content):
        fixes.append(("repair.placeholder", content.strip()))
        del args[action.body_arg]
    return args


def _given(value) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _target(key: str, fields: list[str], given: dict) -> str | None:
    key_snake = snake(key)
    if key in fields:
        return key
    if key_snake in fields:
        return key_snake
    for field, synonyms in SYNONYMS.items():
        if field in fields and key_snake in synonyms and field not in given:
            return field
    return None


def _coerce(value, annotation):
    """Small, safe coercions the model gets wrong: a number as text, a one-item list, a dict body."""
    text = str(annotation)
    if isinstance(value, list) and len(value) == 1 and "list" not in text:
        value = value[0]
    if "int" in text and isinstance(value, str) and re.fullmatch(r"-?[0-9]{1,18}", value.strip()):
        return int(value.strip())
    if "str" in text and isinstance(value, int | float) and not isinstance(value, bool):
        return str(value)
    return value


@dataclass
class ArgsLoader:
    """Argument text (a JSON object, or call syntax) to a dict. JSON: strict, else cheap repairs (raw newlines in
    strings, a Python literal such as a triple-quoted string, a missing closing brace), else json-repair, whose time
    grows with the square of a bad input: it sees at most `per_text` characters at once, `budget` per reply."""

    budget: int = 6_000
    per_text: int = 4_000
    literal_budget: int = 16_000
    """Characters of failed Python-literal attempts per reply (a reply of many unclosed argument objects would
    otherwise cost a parse each); once spent, only JSON is tried."""

    def load(self, src: str, fixes: list) -> dict:
        """The arguments as a dict ({} when nothing can be made of them)."""
        src = src.strip()
        if not src:
            return {}
        try:
            value = json.loads(src)
            return value if isinstance(value, dict) else {"_value": value}
        except (ValueError, RecursionError):  # incl. ints over 4300 digits
            pass
        closed = src if src.endswith("}") else src + "}"
        for candidate in dict.fromkeys((src, closed)):
            try:
                value = json.loads(candidate, strict=False)
                if isinstance(value, dict):
                    fixes.append(("repair.json", "repaired malformed JSON arguments"))
                    return value
            except (ValueError, RecursionError):
                pass
            if self.literal_budget <= 0:
                continue
            try:
                value = ast.literal_eval(candidate)
                if isinstance(value, dict):
                    fixes.append(("repair.python_literal", "arguments were a Python dict (triple-quoted strings)"))
                    return {str(k): v for k, v in value.items()}
            except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
                pass
            self.literal_budget -= len(candidate)
        if len(src) > min(self.per_text, self.budget):
            return {}
        self.budget -= len(src)
        try:
            value = json_repair.loads(src)
        except (ValueError, RecursionError, IndexError, KeyError, TypeError):
            value = None
        if isinstance(value, dict):
            fixes.append(("repair.json", "repaired malformed JSON arguments"))
            return value
        return {}

    def call_args(self, inner: str, fixes: list) -> tuple[dict, list]:
        """Keyword and positional arguments of call syntax, `read("a.py", start=3)`, as Python literals."""
        if not inner.strip():
            return {}, []
        if inner.strip().startswith("{") and inner.strip().endswith("}"):
            return self.load(inner.strip(), fixes), []
        try:
            node = ast.parse(f"f({inner})", mode="eval").body
            positional = [ast.literal_eval(a) for a in node.args]
            keywords = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
            return keywords, positional
        except (SyntaxError, ValueError, TypeError, MemoryError, RecursionError):
            fixes.append(("repair.call_args", "kept the text as one argument"))
            return {}, [inner.strip().strip("'\"")]
