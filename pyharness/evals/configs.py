"""`ph eval --configs`: the axes a run compares (harness, protocol, schedule, without, sandbox) and the configurations a
spec such as `protocol=text,oneshot harness=on,off` stands for."""

import re
from dataclasses import dataclass, replace

from pyharness.errors import UserError
from pyharness.harness.pipeline import LAYERS
from pyharness.trials.schedule import PRESETS

AXES = {"harness": ("on", "off"), "protocol": ("text", "json", "tools", "oneshot"), "schedule": tuple(PRESETS),
        "without": ("none", *LAYERS), "sandbox": ("on", "off")}


@dataclass(frozen=True)
class EvalConfig:
    """One configuration under comparison; its name (e.g. 'harness=off') labels its results."""

    name: str
    harness: str = "on"
    protocol: str = "text"
    schedule: str = "default"
    """A trials.schedule.PRESETS name: the trials schedule per mode."""
    without: str = "none"
    """A harness layer switched off (an ablation of harness=on), several joined by '+', or 'none'."""
    sandbox: str = ""
    """on: the run's tests and the model's code run in the sandbox; off: with the user's rights; '' (no sandbox
    axis): as the command says (`--sandbox`, the default, or `--no-sandbox`)."""


def parse_configs(specs: list[str] | None) -> list[EvalConfig]:
    """Configurations from `harness=on,off` style specs (axes multiply, oneshot has no harness); no tools yet."""
    chosen: dict[str, list[str]] = {}
    for part in re.split(r"[\s;]+", " ".join(specs or []).strip()):
        if not part:
            continue
        key, sep, values = part.partition("=")
        if not sep or key not in AXES:
            raise UserError(f"--configs takes AXIS=VALUE,VALUE with AXIS one of {', '.join(AXES)}; got {part!r}")
        wanted = [v.strip() for v in values.split(",") if v.strip()]
        bad = [v for v in wanted if not set(v.split("+") if key == "without" else [v]) <= set(AXES[key])]
        if bad or not wanted:
            raise UserError(f"{key} takes {', '.join(AXES[key])}; got {values!r}")
        chosen[key] = list(dict.fromkeys(chosen.get(key, []) + wanted))
    if "tools" in chosen.get("protocol", []):
        raise UserError("protocol=tools is not implemented yet")
    configs = [EvalConfig("", "on", "text", "default")]
    for key, values in (chosen or {"harness": ["on"]}).items():
        configs = [EvalConfig(f"{c.name} {key}={v}".strip(), **{**_fields(c), key: v}) for c in configs for v in values]
    # The model alone has no harness to switch: protocol=oneshot is one configuration whatever the harness axis says.
    # (The sandbox axis still applies: the one reply's program is run and checked.)
    configs = [EvalConfig("protocol=oneshot" + (f" sandbox={c.sandbox}" if "sandbox" in chosen else ""), "off",
                          "oneshot", sandbox=c.sandbox) if c.protocol == "oneshot" else c for c in configs]
    # Nor has harness=off a layer to leave out.
    configs = [replace(c, name=re.sub(r" without=\S+", "", c.name), without="none") if c.harness == "off" else c
               for c in configs]
    return list(dict.fromkeys(configs))


def _fields(config: EvalConfig) -> dict:
    return {"harness": config.harness, "protocol": config.protocol, "schedule": config.schedule,
            "without": config.without, "sandbox": config.sandbox}
