"""evals: `ph eval` and what it measures. The runner (tasks x models x configurations x repeats, interleaved, one JSON
line per run), the suites (stdout, humaneval, jobs, mutants) and their data, the configurations a run compares, the
reports, the model-alone baseline (`oneshot`), seeded mutants of real projects, and `ph demo`'s jobs.

May import loop and everything below it; never cli or export.
"""
