"""`python -m pyharness.cli`: the `ph` command without the installed script."""

from pyharness.cli.main import app

app()
