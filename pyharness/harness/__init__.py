"""harness: the deterministic layer every model reply passes through before anything runs (docs/harness.md), one module
per layer: parse, repair, validate (pipeline), loops, steer, context, lint, imports, confidence, rank, quotes, prose;
the JSON reply protocol (`structured`), code merge, and the examples the prompts and format errors show (`examples`).

Knows actions only through the `ActionSpec` protocol in `call` (never imports `pyharness.actions`). May import
workspace and models; never actions, localise, trials, loop or anything above.
"""
