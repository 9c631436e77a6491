"""Every `ph` command the README and docs/ show names a real command with options that command has."""

import re
import shlex
from pathlib import Path

from test_readme_install import check_ph

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def ph_commands(text: str) -> list[list[str]]:
    """The `ph ...` command lines of a page's sh/bash/console blocks (continued lines joined, `$ ` prompts dropped)."""
    found = []
    for block in re.findall(r"```(?:sh|bash|console)\n(.*?)```", text, re.DOTALL):
        for line in block.replace("\\\n", " ").splitlines():
            line = line.removeprefix("$ ").strip()
            if not re.match(r"(\.venv/bin/)?ph\b", line):
                continue
            words = shlex.split(line, comments=True)
            found.append(words[1:])
    return found


def test_the_pages_show_ph_commands():
    shown = {page.name: ph_commands(page.read_text(encoding="utf-8")) for page in PAGES}
    assert len(shown["README.md"]) >= 10 and shown["training.md"]


def test_every_ph_command_shown_is_real():
    for page in PAGES:
        for args in ph_commands(page.read_text(encoding="utf-8")):
            check_ph(args)


def test_a_wrong_command_or_option_is_caught():
    bad = ph_commands("```sh\nph fix --repo x --no-such-option\n```\n")
    assert bad == [["fix", "--repo", "x", "--no-such-option"]]
    try:
        check_ph(bad[0])
    except AssertionError as err:
        assert "--no-such-option" in str(err)
    else:
        raise AssertionError("an unknown option passed")
