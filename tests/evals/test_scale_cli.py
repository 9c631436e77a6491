"""`ph eval --on ray` at the command line (issue 26): nothing Ray-related is imported without it, its errors are one
line, and the README's cluster commands name real options of a real command."""

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

from scalekit import SHOUT, write_program, write_replies, write_tasks
from test_readme_install import check_ph

ROOT = Path(__file__).resolve().parents[2]
NO_RAY = "import sys; sys.modules['ray'] = None\n"
"""Run before ph in a child Python: `import ray` then fails as it does where Ray is not installed."""


def ph_in_child(args: list[str], before: str = "", after: str = "", cwd: Path | None = None):
    """Run `ph ARGS` in a child Python (with `before` run first, `after` run at exit) and return the process."""
    code = (f"import atexit, sys\n{before}\natexit.register(lambda: ({after or 'None'}))\n"
            f"from pyharness.cli.main import app\napp({args!r}, prog_name='ph')\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=cwd)


RAY_LOADED = "print('ray modules:', sorted(m for m in sys.modules if m == 'ray' or m.startswith('ray.')))"


def test_help_and_a_plain_eval_import_nothing_of_ray(tmp_path):
    for args in (["--help"], ["eval", "--help"]):
        shown = ph_in_child(args, after=RAY_LOADED)
        assert shown.returncode == 0 and "ray modules: []" in shown.stdout, shown.stderr
    assert "--on" in ph_in_child(["eval", "--help"]).stdout
    tasks = write_tasks(tmp_path / "tasks", SHOUT)
    replies = write_replies(tmp_path / "replies", {"shout": [write_program(SHOUT["reference"])]})
    plain = ph_in_child(["eval", str(tasks), "--model", f"scripted:{replies}", "--out", str(tmp_path / "out")],
                        after=RAY_LOADED, cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "ray modules: []" in plain.stdout and "[1/1] shout harness=on r0: pass" in plain.stderr


def test_on_ray_without_ray_says_how_to_install_it(tmp_path):
    tasks = write_tasks(tmp_path / "tasks", SHOUT)
    refused = ph_in_child(["eval", str(tasks), "--on", "ray", "--model", "scripted:x.json"], before=NO_RAY,
                          cwd=tmp_path)
    assert refused.returncode == 1
    assert refused.stderr.strip() == "ph: --on ray needs Ray: pip install 'py-harness[scale]' (or pip install " \
                                     "'ray>=2.9')"
    assert not (tmp_path / "out").exists()


def test_bad_ray_options_are_one_line(tmp_path):
    tasks = write_tasks(tmp_path / "tasks", SHOUT)
    cases = [
        (["--per-server", "2"], "ph: --per-server goes with --on ray"),
        (["--threads", "2"], "ph: --threads goes with --on ray"),
        (["--on", "cloud"], "ph: Invalid value for '--on': 'cloud' is not one of local, ray (see ph eval -h)"),
        (["--model", "openai:qwen@http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1"],
         "ph: openai:qwen@http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1 names 2 servers: spreading runs over "
         "servers needs --on ray (pip install 'py-harness[scale]'); or name one server"),
        (["--model", "openai:qwen@10.0.0.1:8000"], "ph: openai:qwen@10.0.0.1:8000: after @ comes a server URL, or "
         "several separated by commas, e.g. openai:qwen@http://10.0.0.1:8000/v1,http://10.0.0.2:8000/v1"),
    ]
    for extra, message in cases:
        args = ["eval", str(tasks), *(["--model", "scripted:x.json"] if "--model" not in extra else []), *extra]
        refused = ph_in_child(args, cwd=tmp_path)
        assert (refused.returncode, refused.stderr.strip()) == (1, message), (extra, refused.stderr)


def cluster_commands() -> list[list[str]]:
    """The commands of the README's "### Evals on a cluster" block."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n### Evals on a cluster", 1)[1].split("\n## ", 1)[0]
    [block] = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    return [shlex.split(line) for line in block.splitlines() if line.strip()]


def test_the_readme_shows_ray_for_a_cluster_and_for_several_servers():
    commands = cluster_commands()
    assert len(commands) == 2 and all(c[:2] == ["ph", "eval"] and "--on" in c for c in commands)
    assert any("--ray-address" in c for c in commands)
    assert any(arg.count("http") >= 2 and "," in arg for c in commands for arg in c)  # one model, several servers
    for words in commands:
        check_ph(words[1:])
        assert words[words.index("--on") + 1] == "ray"
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    assert extras["scale"] == ["ray>=2.9"] and "ray>=2.9" in extras["dev"]
