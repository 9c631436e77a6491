"""The README's set-up section: every shell command in it is one ph knows how to back up (nothing is installed)."""

import re
import shlex
import tomllib
from pathlib import Path

import typer
from typer.testing import CliRunner

from pyharness.cli.main import app

ROOT = Path(__file__).parents[1]
KNOWN = {"make", "pipx", "uv", "source", "ph", ".venv/bin/ph"}
"""The programs the set-up section may use."""


def setup_commands() -> list[list[str]]:
    """The commands of the fenced sh/bash blocks between '## Set up' and the next '## ' heading."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Set up", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```(?:sh|bash|console)\n(.*?)```", section, re.DOTALL)
    return [words for block in blocks for line in block.splitlines() if (words := shlex.split(line, comments=True))]


def make_targets() -> set[str]:
    return set(re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE))


def check_ph(args: list[str]) -> None:
    """A ph command line names a real command and only options that command has."""
    group = typer.main.get_command(app)
    path: list[str] = []
    command = group
    for word in args:
        subs = getattr(command, "commands", None)
        if word.startswith("-") or not subs:
            break
        assert word in subs, f"`ph {' '.join(args)}`: no command {word!r} (commands: {', '.join(subs)})"
        path.append(word)
        command = subs[word]
    shown = CliRunner().invoke(app, [*path, "--help"], prog_name="ph", terminal_width=200)
    assert shown.exit_code == 0, shown.output
    for option in (w.split("=")[0] for w in args if w.startswith("--")):
        assert option in shown.output, f"`ph {' '.join(args)}`: ph {' '.join(path)} has no {option}"


def test_the_setup_section_has_the_path_and_install_commands():
    commands = [" ".join(c) for c in setup_commands()]
    for expected in ("make demo", "pipx install .", "pipx install .[local]", "uv tool install .",
                     "uv tool install .[local]", ".venv/bin/ph doctor", "source .venv/bin/activate"):
        assert expected in commands, expected


def test_every_setup_command_is_known_and_true():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
                 ["optional-dependencies"])
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    for words in setup_commands():
        program, args = words[0], words[1:]
        assert program in KNOWN, f"README runs {program!r}: not a known set-up program ({', '.join(sorted(KNOWN))})"
        if program == "make":
            assert set(args) <= make_targets(), f"no Makefile target {args}"
        elif program in ("pipx", "uv"):
            verb = ["install"] if program == "pipx" else ["tool", "install"]
            assert args[:-1] == verb, f"{program} {' '.join(args)}"
            spec = re.fullmatch(r"\.(?:\[([\w,]+)\])?", args[-1])
            assert spec, f"{program} installs {args[-1]!r}, not the checkout"
            assert set((spec.group(1) or "").split(",")) - {""} <= extras, f"unknown extra in {args[-1]}"
        elif program == "source":
            assert args == [".venv/bin/activate"] and "VENV ?= .venv" in makefile
        else:  # ph, or the venv's ph that `make demo` installs
            if program == ".venv/bin/ph":
                assert "VENV ?= .venv" in makefile and "BIN = $(VENV)/bin" in makefile
            check_ph(args)


def test_the_console_script_is_ph():
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"ph": "pyharness.cli.main:app"}
