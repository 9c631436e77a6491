"""evals: `ph eval` and what it measures. The runner (tasks x models x configurations x repeats, interleaved, one JSON
line per run, one writer), the same runs fanned out on Ray over many model servers (`--on ray`: fanout on the driver,
remote on the workers; Ray is imported only there), the suites (stdout, humaneval, jobs, mutants, folders of your own)
and their data, the configurations a run compares, the reports, the model-alone baseline (`oneshot`), seeded mutants
of real projects, and `ph demo`'s jobs.

May import loop and everything below it; never cli or export.
"""
