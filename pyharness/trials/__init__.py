"""trials: sampled candidates checked in scratch copies, and the tests choose (the harness layer `trials`). The
schedule, what a candidate asks for (`candidates`: whole file, whole function, line framings; `suspects`: fix mode's
suspect functions; `cloze`: a masked statement filled in, its `holes`, the `wideholes` around a suspect and the
failing test shown beside them, `clozetest`), the verdict of a check in a scratch copy, agreement among
passing candidates, and checks read from a task's own text.

May import localise, actions, harness, workspace and models; never loop (the loop hands the trials the run's state),
evals, export or cli.
"""
