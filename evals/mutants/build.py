"""Rebuild evals/mutants/jobs.json from the pinned projects (deterministic: same versions, same seed, same jobs).

    python evals/mutants/build.py            # all projects
    python evals/mutants/build.py toolz      # one project (its jobs replace that project's in the file)

Each kept mutant broke >= 1 test of its module's test file, which the unmutated tree passes.
"""

import json
import sys
import time

from pyharness.evals import mutants, projects

# jobs wanted per project and how they spread over modules; sympy is the large tree (>= 40 jobs asked for)
PLAN = {
    "toolz": {"per_module": 8, "limit": 40},
    "more-itertools": {"per_module": 20, "tries": 40, "limit": 40},
    "boltons": {"per_module": 2, "limit": 40},
    "sympy": {"per_module": 2, "limit": 50},
}


def main(names: list[str]) -> None:
    path = mutants.manifest_path()
    old = json.loads(path.read_text(encoding="utf-8"))["jobs"] if path.is_file() else []
    names = names or list(PLAN)
    jobs = [j for j in old if j["project"] not in names]
    for name in names:
        project = projects.PROJECTS[name]
        started = time.monotonic()
        tree = projects.fetch(project)
        built = mutants.build(tree, name, project.packages, large=project.python_files >= projects.LARGE_TREE,
                              progress=lambda text: print(f"  {text}", flush=True), **PLAN[name])
        print(f"{name}: {len(built)} jobs in {time.monotonic() - started:.0f} s", flush=True)
        jobs += [j.to_json() for j in built]
        write(path, jobs)  # after each project, so a long build keeps what it has


def write(path, jobs: list[dict]) -> None:
    jobs = sorted(jobs, key=lambda j: j["id"])
    header = {"about": "fix jobs seeded into pinned sdists by evals/mutants/build.py; sources are fetched, never "
                       "committed", "projects": {n: {"version": p.version, "sha256": p.sha256, "license": p.license}
                                                 for n, p in projects.PROJECTS.items()}}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({**header, "jobs": jobs}, indent=1) + "\n", encoding="utf-8")
    print(f"{len(jobs)} jobs -> {path}")


if __name__ == "__main__":
    main(sys.argv[1:])
