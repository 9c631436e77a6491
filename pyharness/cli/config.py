"""Where a run's settings come from, first match wins.

- model: `--model` > `PH_MODEL` > the user config file > the repo's `pyproject.toml` `[tool.ph] model` > auto.
- max-steps, max-seconds, test-timeout, stream: the flag > the user config file > the command's default.
- python (the interpreter that runs the repo's code): `--python` > `PH_PYTHON` > the user config file > an active
  virtualenv > a venv inside the repo > ph's own (pyharness.workspace.interpreter; a repo may not choose it).

The user config file is TOML at `$PH_CONFIG`, else `config.toml` in the user config dir (platformdirs, app
"pyharness", like the state dir in lock.py). Keys are spelt like the flags (`max-steps`; `max_steps` works too).
A broken file is a one-line `UserError` naming the file and the line; an unknown key or a wrong type as well.

A repository is not trusted with limits: its `[tool.ph]` may name only a model, and only one that runs on this
machine (an Ollama model, an embedded pack by name, or `openai:MODEL` with no URL: the user's own server), and
never one over the user's own choice (a flag, PH_MODEL or the user config file all win over it), so a repo cannot
raise a budget, load a file of its choosing as a model, or send the prompt and OPENAI_API_KEY to a server of its
choosing, not even a port on this machine (any local process may listen there; docs/safety-cases.md case 75). Anything
else there is ignored with a one-line note.
"""

import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pyharness.errors import UserError

ENV_MODEL = "PH_MODEL"
ENV_CONFIG = "PH_CONFIG"
ENV_PYTHON = "PH_PYTHON"
KEYS: dict[str, type] = {"model": str, "max_steps": int, "max_seconds": float, "test_timeout": float, "stream": bool,
                         "python": str}
"""The settings a user config file may hold, by their Python name; the file spells them with '-' or '_'."""


@dataclass(frozen=True)
class Setting:
    """One effective value and where it came from."""

    value: Any
    source: str
    """'flag', 'env PH_MODEL', 'pyproject.toml', 'user config' or 'default'."""
    where: str = ""
    """The file, for the two file sources."""

    def describe(self) -> str:
        return f"{self.source} {self.where}" if self.where else self.source


@dataclass
class Settings:
    """A run's effective settings, plus notes about what was ignored (one line each)."""

    values: dict[str, Setting]
    notes: list[str] = field(default_factory=list)
    user_config: Path | None = None
    root: Path | None = None
    """The repo the settings are for (None: none)."""

    def __getitem__(self, name: str) -> Any:
        return self.values[name].value


def user_config_path() -> Path:
    """The user config file: $PH_CONFIG, else config.toml in the user config dir."""
    if env := os.environ.get(ENV_CONFIG):
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("pyharness")) / "config.toml"


def read_user_config(path: Path) -> dict[str, Any]:
    """The settings in the user config file ({} when it does not exist); a `UserError` for anything wrong in it."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as err:
        raise UserError(f"config file {path}: unreadable ({err.__class__.__name__}: {err})") from None
    data = _parse(path, text)
    found: dict[str, Any] = {}
    for raw, value in data.items():
        name = raw.replace("-", "_")
        if name not in KEYS:
            known = ", ".join(k.replace("_", "-") for k in KEYS)
            raise UserError(f"config file {path} line {_line_of(text, raw)}: unknown setting '{raw}' (known: {known})")
        found[name] = _checked(path, text, raw, name, value)
    return found


def read_repo_config(root: Path) -> tuple[str | None, list[str]]:
    """The model the repo's pyproject.toml `[tool.ph]` names (None if none or refused), and a note per thing ignored."""
    path = root / "pyproject.toml"
    try:
        text = path.read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
        return None, []
    except (OSError, UnicodeDecodeError) as err:
        return None, [f"{path} is unreadable ({err.__class__.__name__}), so its [tool.ph] is ignored"]
    section = _parse(path, text).get("tool", {})
    section = section.get("ph") if isinstance(section, dict) else None
    if not isinstance(section, dict):
        return None, []
    notes = []
    others = sorted(k for k in section if k != "model")
    if others:
        notes.append(f"ignoring [tool.ph] {', '.join(others)} in {path}: a repo may set only `model`; limits come "
                     f"from flags or your config file")
    model = section.get("model")
    if model is None:
        return None, notes
    refusal = _repo_model_refusal(model)
    if refusal:
        notes.append(f"ignoring [tool.ph] model = {model!r} in {path}: {refusal}")
        return None, notes
    return model, notes


def effective(flags: dict[str, Any], defaults: dict[str, Any], root: Path | None,
              env: dict[str, str] | None = None) -> Settings:
    """Each setting in `flags` (given on the command line) or `defaults` (the command's own), after the config files.
    `root` is the repo whose pyproject.toml may name the model (None: no repo)."""
    env = os.environ if env is None else env
    path = user_config_path()
    user = read_user_config(path)
    repo_model, notes = read_repo_config(root) if root is not None else (None, [])
    values: dict[str, Setting] = {}
    for name in {**defaults, **flags}:
        if name in flags:
            values[name] = Setting(flags[name], "flag")
        elif name == "model" and env.get(ENV_MODEL):
            values[name] = Setting(env[ENV_MODEL], f"env {ENV_MODEL}")
        elif name == "python" and env.get(ENV_PYTHON):
            values[name] = Setting(env[ENV_PYTHON], f"env {ENV_PYTHON}")
        elif name in user:
            values[name] = Setting(user[name], "user config", str(path))
        elif name == "model" and repo_model:
            values[name] = Setting(repo_model, "pyproject.toml", str(root / "pyproject.toml"))
        else:
            values[name] = Setting(defaults.get(name), "default")
    return Settings(values, notes, path, root)


def choose_model(setting: Setting) -> tuple[Any, str | None]:
    """The model a setting names, or the automatic choice; plus the line to show when the user did not type it."""
    from pyharness.models.resolve import auto_model, resolve_model

    if setting.value:
        model = resolve_model(setting.value)
        return model, None if setting.source == "flag" else f"model: {model.name} (from {setting.describe()})"
    model, why = auto_model()
    return model, f"model: {model.name} ({why})"


def describe_settings(settings: Settings) -> list[str]:
    """`ph config`'s lines: each setting, where its value comes from, the value; then the config file's path."""
    lines = [f"{'setting':<13}{'source':<16}value"]
    for name, setting in settings.values.items():
        value = _shown(name, setting.value)
        if name == "model" and not setting.value:
            value = f"auto, now {_auto_now()}"
        if name == "python":
            value = _python_now(settings.root, setting)
        lines.append(f"{name.replace('_', '-'):<13}{setting.source:<16}{value}")
    path = settings.user_config
    state = "found" if path is not None and path.is_file() else "not found; it takes lines like `max-steps = 30`"
    return [*lines, f"config file: {path} ({state})"]


def _shown(name: str, value: Any) -> str:
    if name == "max_steps" and value is None:
        return "12 for ask, 20 for the others"
    if isinstance(value, bool):
        return "true" if value else "false"
    return f"{value:g}" if isinstance(value, float) else str(value)


def choose_python(root: Path | None, setting: Setting | None, need_pytest: bool = True):
    """The interpreter that runs the repo's code (pyharness.workspace.interpreter), from a `python` setting."""
    from pyharness.workspace.interpreter import choose

    named = None
    if setting is not None and setting.value:
        named = (setting.value, "--python" if setting.source == "flag" else setting.describe())
    return choose(root, named, need_pytest=need_pytest)


def _python_now(root: Path | None, setting: Setting) -> str:
    try:
        chosen = choose_python(root, setting, need_pytest=False)
    except UserError as err:
        return f"none: {err}"
    text = chosen.describe().removeprefix("python: ")
    return text if setting.value else f"auto, now {text}"


def _auto_now() -> str:
    from pyharness.errors import ModelError
    from pyharness.models.resolve import auto_model

    try:
        model, why = auto_model()
    except ModelError as err:
        return f"none: {err}"
    return f"{model.name} ({why.removeprefix('auto: ')})"


def _parse(path: Path, text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        message = str(err)
        at = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
        if at:
            message = f"line {at.group(1)}: {message[: at.start()]} (column {at.group(2)})"
        raise UserError(f"config file {path} {message}: not valid TOML") from None


def _checked(path: Path, text: str, raw: str, name: str, value: Any) -> Any:
    kind = KEYS[name]
    ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value, ok = float(value), True
    if ok and kind is str and not value.strip():
        ok = False
    if ok and kind in (int, float) and value <= 0:
        ok = False
    if not ok:
        want = {str: "a path in quotes" if name == "python" else "a model spec in quotes",
                int: "a whole number above 0", float: "a number of seconds above 0", bool: "true or false"}[kind]
        raise UserError(f"config file {path} line {_line_of(text, raw)}: {raw} = {value!r} should be {want}")
    return value


def _line_of(text: str, key: str) -> int:
    pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=")
    return next((n for n, line in enumerate(text.splitlines(), 1) if pattern.match(line)), 1)


def _repo_model_refusal(spec: Any) -> str:
    """Why a repo may not choose this model ('' when it may)."""
    if not isinstance(spec, str) or not spec.strip():
        return "it should be a model spec in quotes"
    kind, _, rest = spec.partition(":")
    if kind == "ollama":
        return ""
    if kind == "llamacpp":
        from pyharness.models.packs import PACKS

        return "" if rest in PACKS or not rest else "a repo may name an embedded pack, not a model file"
    if kind == "openai":
        _, at, _url = rest.rpartition("@")
        return "" if not at else "a repo may not name a server URL (your OPENAI_API_KEY would go there)"
    return "a repo may name ollama:NAME, llamacpp:PACK or openai:MODEL"
