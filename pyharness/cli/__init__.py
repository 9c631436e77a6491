"""cli: the `ph` command line. The typer app and its commands (`main`, `evaluate`, `export`, `history`, `model`), the
options several commands share (declared once in `options`), where settings come from (`config`), and every view of a
run: the rich console, the eval progress bar, `--json`, the end-of-run recap, `ph doctor`.

The only wing that prints or exits. It may import every other wing; no other wing imports it. Heavy imports happen
inside commands, so `ph --help` loads no model backend.
"""
