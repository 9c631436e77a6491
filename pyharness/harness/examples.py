"""The literal example of each action a prompt or a format error shows: per mode (stdout tasks have their own,
naming main.py), and naming a real file of the repo instead of the made-up one the model would go looking for."""

import re

from pyharness.harness.call import ActionSpec

MODE_EXAMPLES = {
    "stdout": {
        "write": 'Action: write {"path": "main.py"}\n```python\nimport sys\n\nwords = sys.stdin.read().split()\n'
        'print(len(words))\n```',
        "done": 'Action: done {"summary": "main.py prints the expected output for the example"}',
    },
}


EXAMPLE_PATH = re.compile(r"\bshop/\w+\.py\b")


def example_of(mode: str, action: ActionSpec, path: str | None = None) -> str:
    """The literal example of an action shown in this mode (stdout tasks have their own: main.py); with `path`
    (a real file of the repo) the example names it instead of a made-up file the model would go looking for."""
    example = MODE_EXAMPLES.get(mode, {}).get(action.name, action.example)
    return EXAMPLE_PATH.sub(path, example) if path else example
