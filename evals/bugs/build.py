"""Mine real bugs from projects' git histories into evals/bugs/jobs.json (issue 37).

    python evals/bugs/build.py MIRROR                 # every project of PLAN
    python evals/bugs/build.py MIRROR click attrs     # some (their jobs replace those projects' in the manifest)
    python evals/bugs/build.py MIRROR --survey        # candidates per project, nothing run
    python evals/bugs/build.py MIRROR arrow --manifest=/tmp/part.json   # another manifest (builds side by side)
    python evals/bugs/build.py --merge /tmp/part.json ...                # fold such parts into the committed one
    python evals/bugs/build.py --table                                    # the README's projects table

MIRROR holds one bare git dir of each project's public repository, at MIRROR/OWNER+NAME/repo (what the search
tool's `fetch` gives; a `git clone --bare` of each PLAN repository into that path serves as well). The histories are
read only to find candidates; nothing of them is written: the manifest holds coordinates, hashes and numbers.

A candidate is a commit between two releases V0 < V1 (both sdists on the package index) whose message says fix, bug,
regression, crash, wrong, ... , that changes a test file and 1-2 non-test .py files of the package, 1-30 lines in
those. Each of its hunks must be found, with its context, exactly once in V1's sdist (the fixed text) and once in
V0's (the pre-fix text); the seed swaps the changed lines. It is kept when, in the project's venv, the commit's test
files as V1 ships them pass on V1 and the seeded tree fails some of their tests (the same ones twice, no error).
"""

import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import InvalidVersion, Version

from pyharness.evals import bugprojects, bugs
from pyharness.evals.projects import Project, sha256_of, unpack
from pyharness.workspace.testrun import run_pytest

FIX_WORDS = re.compile(r"\b(fix(e[sd])?|fixing|bug|regression|crash(es)?|wrong|incorrect|broken|issue|error"
                       r"|fail(s|ed|ure)?)\b", re.IGNORECASE)
NOT_SOURCE = ("docs/", "doc/", "examples/", "example/", "scripts/", "benchmarks/", "bench/", "tasks/", "ci/",
              "typing_tests/")
MAX_LINES = 30
SCRATCH = Path("/work/scratch-bugs")


@dataclass
class Plan:
    """How to mine one project: its repository, licence, split, what its tests need (unpinned; pinned when built)."""

    repo: str
    license: str
    split: str
    deps: tuple[str, ...] = ()
    test_deps: tuple[str, ...] = ()
    releases: int = 20
    """How many of the newest releases to pair."""
    skip_tests: tuple[str, ...] = ()
    """Judging test files that need what the sandbox does not give (the network, a live server)."""
    pins: dict = field(default_factory=dict)


PLAN = {
    "click": Plan("pallets/click", "BSD-3-Clause", "dev"),
    "attrs": Plan("python-attrs/attrs", "MIT", "dev", test_deps=("hypothesis",)),
    "cattrs": Plan("python-attrs/cattrs", "MIT", "test", deps=("attrs", "typing-extensions"),
                   test_deps=("hypothesis", "immutables", "pytest-benchmark")),
    "arrow": Plan("arrow-py/arrow", "Apache-2.0", "test", deps=("python-dateutil", "tzdata"),
                  test_deps=("pytest-mock", "pytz", "simplejson", "dateparser")),
    "python-dateutil": Plan("dateutil/dateutil", "Apache-2.0 AND BSD-3-Clause", "dev", deps=("six",),
                            test_deps=("hypothesis", "freezegun")),
    "marshmallow": Plan("marshmallow-code/marshmallow", "MIT", "dev", test_deps=("simplejson", "pytz"), releases=45),
    "jinja2": Plan("pallets/jinja", "BSD-3-Clause", "test", deps=("MarkupSafe",), test_deps=("trio",)),
    "werkzeug": Plan("pallets/werkzeug", "BSD-3-Clause", "dev", deps=("MarkupSafe",),
                     test_deps=("ephemeral-port-reserve", "pytest-timeout", "watchdog", "cryptography"),
                     skip_tests=("tests/test_serving.py", "tests/test_debug.py")),
    "packaging": Plan("pypa/packaging", "Apache-2.0 OR BSD-2-Clause", "test", test_deps=("pretend",)),
    "sqlparse": Plan("andialbrecht/sqlparse", "BSD-3-Clause", "test"),
    "pyparsing": Plan("pyparsing/pyparsing", "MIT", "test"),
    "markdown": Plan("Python-Markdown/markdown", "BSD-3-Clause", "dev"),
    "parso": Plan("davidhalter/parso", "MIT", "test"),
    "glom": Plan("mahmoud/glom", "BSD-3-Clause", "test", deps=("attrs", "boltons", "face")),
    "inflect": Plan("jaraco/inflect", "MIT", "test", deps=("more-itertools", "typeguard")),
    "humanize": Plan("python-humanize/humanize", "MIT", "dev", test_deps=("freezegun",)),
    "portion": Plan("AlexandreDecan/portion", "LGPL-3.0-only", "dev", deps=("sortedcontainers",)),
    "cachetools": Plan("tkem/cachetools", "MIT", "test"),
    "tabulate": Plan("astanin/python-tabulate", "MIT", "test", test_deps=("wcwidth",)),
    "natsort": Plan("SethMMorton/natsort", "MIT", "dev", test_deps=("hypothesis", "pytest-mock")),
    "tenacity": Plan("jd/tenacity", "Apache-2.0", "test", test_deps=("tornado", "typeguard")),
    "funcy": Plan("Suor/funcy", "BSD-3-Clause", "dev", test_deps=("whatever",)),
    "itsdangerous": Plan("pallets/itsdangerous", "BSD-3-Clause", "test", test_deps=("freezegun",)),
    "jmespath": Plan("jmespath/jmespath.py", "MIT", "test"),
}


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True).stdout


def releases(repo: Path, count: int) -> list[tuple[Version, str]]:
    """(version, tag) of the newest final releases, oldest first."""
    found = {}
    for tag in git(repo, "tag").decode().split():
        try:
            version = Version(tag.removeprefix("v"))
        except InvalidVersion:
            continue
        if not version.is_prerelease and not version.is_devrelease:
            found.setdefault(version, tag)
    return sorted(found.items())[-count:]


def is_test(path: str) -> bool:
    parts = path.split("/")
    return any(p in ("tests", "test", "testing") for p in parts[:-1]) or parts[-1].startswith("test_") \
        or parts[-1].endswith("_test.py") or parts[-1] == "conftest.py"


@dataclass
class Candidate:
    commit: str
    subject: str
    sources: list[str]
    tests: list[str]
    added: int
    removed: int
    v0: str = ""
    v1: str = ""


def candidates(repo: Path, tag0: str, tag1: str) -> list[Candidate]:
    """Commits in V0..V1 that look like small fixes with a test."""
    found = []
    log = git(repo, "log", "--no-merges", "--format=%x00%H%x01%B%x01", "--numstat", f"{tag0}..{tag1}").decode(
        "utf-8", "replace")
    for entry in log.split("\0")[1:]:
        commit, message, stats = entry.split("\x01")
        if not FIX_WORDS.search(message):
            continue
        sources, tests, added, removed, binary = [], [], 0, 0, False
        for row in stats.strip().splitlines():
            a, r, path = row.split("\t", 2)
            if a == "-":
                binary = True
                continue
            if not path.endswith(".py") or "=>" in path:
                continue
            if is_test(path):
                tests.append(path)
            elif not path.startswith(NOT_SOURCE) and path not in ("setup.py", "noxfile.py", "conftest.py"):
                sources.append(path)
                added, removed = added + int(a), removed + int(r)
        if binary or not tests or not 1 <= len(sources) <= 2 or not 1 <= added + removed <= MAX_LINES:
            continue
        found.append(Candidate(commit, message.strip().splitlines()[0], sources, tests, added, removed))
    return found


def hunks_of(repo: Path, commit: str, path: str) -> list[tuple[list[bytes], list[bytes]]] | None:
    """(old block, new block) per hunk of one file's diff, each with its context lines; None when not plain text."""
    out = git(repo, "diff", "--no-color", "--no-ext-diff", "-U3", f"{commit}^", commit, "--", path)
    result, old, new, inside = [], [], [], False
    for line in out.split(b"\n"):
        if line.startswith(b"@@"):
            if inside:
                result.append((old, new))
            old, new, inside = [], [], True
        elif not inside:
            continue
        elif line.startswith(b"\\"):
            return None
        elif line.startswith(b" "):
            old.append(line[1:].rstrip(b"\r"))
            new.append(line[1:].rstrip(b"\r"))
        elif line.startswith(b"-"):
            old.append(line[1:].rstrip(b"\r"))
        elif line.startswith(b"+"):
            new.append(line[1:].rstrip(b"\r"))
    if inside:
        result.append((old, new))
    return result


def find_once(lines: list[bytes], block: list[bytes]) -> int | None:
    """Where `block` starts in `lines`, when it occurs exactly once."""
    n = len(block)
    starts = [i for i in range(len(lines) - n + 1) if lines[i:i + n] == block]
    return starts[0] if len(starts) == 1 else None


def locate(candidate: Candidate, repo: Path, t0: Path, t1: Path) -> list[bugs.Hunk] | None:
    """The seed's hunks (V1 lines -> V0 lines) when every hunk is found once in both releases."""
    found = []
    for path in candidate.sources:
        rel = next((p for p in (path, path.removeprefix("src/")) if (t1 / p).is_file() and (t0 / p).is_file()), None)
        blocks = hunks_of(repo, candidate.commit, path)
        if rel is None or not blocks:
            return None
        new_lines = [x.rstrip(b"\r\n") for x in (t1 / rel).read_bytes().splitlines(keepends=True)]
        old_lines = [x.rstrip(b"\r\n") for x in (t0 / rel).read_bytes().splitlines(keepends=True)]
        for old, new in blocks:
            head = 0
            while head < min(len(old), len(new)) and old[head] == new[head]:
                head += 1
            tail = 0
            while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
                tail += 1
            at_new, at_old = find_once(new_lines, new), find_once(old_lines, old)
            if at_new is None or at_old is None or not new or not old:
                return None
            found.append(bugs.Hunk(rel, (at_new + head, at_new + len(new) - tail),
                                   (at_old + head, at_old + len(old) - tail)))
    spans = sorted((h.file, h.new) for h in found)
    if any(a[0] == b[0] and a[1][1] > b[1][0] for a, b in zip(spans, spans[1:])):
        return None
    return found


def seeded_bytes(t1: Path, t0: Path, rel: str, hunks: list[bugs.Hunk]) -> bytes:
    lines = (t1 / rel).read_bytes().splitlines(keepends=True)
    old = (t0 / rel).read_bytes().splitlines(keepends=True)
    for h in sorted((h for h in hunks if h.file == rel), key=lambda h: h.new, reverse=True):
        lines[h.new[0]:h.new[1]] = old[h.old[0]:h.old[1]]
    return b"".join(lines)


class Releases:
    """Sdists of one project, downloaded once into the bugs cache; their sha256 recorded for the manifest."""

    def __init__(self, name: str, license: str):
        self.name, self.license, self.sha = name, license, {}
        self.cache = bugprojects.cache_root()

    def tree(self, version: str) -> Path | None:
        tree = self.cache / f"{self.name}-{version}"
        if (tree / ".ph-verified").is_file():
            self.sha[version] = (tree / ".ph-verified").read_text().strip()
            return tree
        with tempfile.TemporaryDirectory(prefix="ph-bugs-dl-") as tmp:
            try:
                archive = bugprojects.download_sdist(self.name, version, Path(tmp))
            except Exception as err:  # no sdist of that release on the index: the pair is skipped
                print(f"  {self.name} {version}: {err}", flush=True)
                return None
            if not archive.name.endswith(".tar.gz"):
                return None
            digest = sha256_of(archive)
            unpack(archive, Project(self.name, version, digest, self.license, (), 0), self.cache)
        self.sha[version] = digest
        return tree


def pin(plan: Plan) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Pin the plan's requirements to what the index gives now (resolved together, in a scratch venv)."""
    if not plan.deps and not plan.test_deps:
        return (), ()
    venv = Path(tempfile.mkdtemp(prefix="pin-", dir=SCRATCH))
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin/python"), "-m", "pip", "install", "-q", *plan.deps, *plan.test_deps,
                        bugprojects.PYTEST], check=True)
        frozen = subprocess.run([str(venv / "bin/python"), "-m", "pip", "freeze"], capture_output=True, text=True,
                                check=True).stdout.split()
    finally:
        shutil.rmtree(venv, ignore_errors=True)
    versions = {canon(line.split("==")[0]): line for line in frozen if "==" in line}
    return tuple(versions[canon(d)] for d in plan.deps), tuple(versions[canon(d)] for d in plan.test_deps)


def canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def mine(name: str, plan: Plan, mirror: Path, survey: bool, old: dict) -> tuple[bugprojects.BugProject, list]:
    repo = mirror / plan.repo.replace("/", "+") / "repo"
    tags = releases(repo, plan.releases)
    seen: set[str] = set()
    cands = []
    for (v0, tag0), (v1, tag1) in reversed(list(zip(tags, tags[1:]))):
        for c in candidates(repo, tag0, tag1):
            if c.commit not in seen:
                seen.add(c.commit)
                c.v0, c.v1 = str(v0), str(v1)
                cands.append(c)
    print(f"{name}: {len(cands)} candidates over {len(tags)} releases", flush=True)
    deps, test_deps = old.get("deps") or (), old.get("test_deps") or ()
    if not survey and (plan.deps or plan.test_deps) and not (deps or test_deps):
        deps, test_deps = pin(plan)
    rel = Releases(name, plan.license)
    project = bugprojects.BugProject(name, plan.license, f"https://github.com/{plan.repo}", plan.split, tuple(deps),
                                     tuple(test_deps), {})
    python = None if survey else bugprojects.venv_python(project)
    jobs, located, clean_runs = [], 0, {}
    for c in cands:
        t0, t1 = rel.tree(c.v0), rel.tree(c.v1)
        if t0 is None or t1 is None:
            continue
        hunks = locate(c, repo, t0, t1)
        tests = [t for t in dict.fromkeys(p if (t1 / p).is_file() else p.removeprefix("src/") for p in c.tests)
                 if (t1 / t).is_file() and t not in plan.skip_tests and Path(t).name.startswith("test")]
        if hunks is None or not tests:
            continue
        located += 1
        if survey:
            continue
        job = judge(name, c, hunks, tests, t0, t1, python, repo_url=project.repository, clean_runs=clean_runs)
        if job is not None:
            job.split = plan.split
            jobs.append(job)
            project.releases[c.v0], project.releases[c.v1] = rel.sha[c.v0], rel.sha[c.v1]
    print(f"{name}: {located} located, {len(jobs)} jobs", flush=True)
    return project, jobs


def judge(name, c: Candidate, hunks, tests, t0: Path, t1: Path, python, repo_url: str, clean_runs: dict):
    """The job when V1 passes the tests and the seeded tree fails some of them, the same twice."""
    key = (c.v1, tuple(tests))
    with tempfile.TemporaryDirectory(prefix="ph-bugs-") as tmp:
        work = Path(tmp) / "tree"
        shutil.copytree(t1, work, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".ph-verified"))
        if key not in clean_runs:
            run = run_pytest(work, tests, timeout=bugs.CHECK_TIMEOUT, python=python)
            clean_runs[key] = run.green
            if not run.green:
                print(f"  {c.v1} {' '.join(tests)}: not green ({run.summary()})", flush=True)
        if not clean_runs[key]:
            return None
        files = sorted({h.file for h in hunks})
        seeded = {rel: seeded_bytes(t1, t0, rel, hunks) for rel in files}
        for rel, data in seeded.items():
            (work / rel).write_bytes(data)
        runs = []
        for _ in range(2):
            run = run_pytest(work, tests, timeout=bugs.CHECK_TIMEOUT, python=python)
            if run.exit_code != 1 or not run.failing or run.timed_out or run.counts.get("error") \
                    or run.counts.get("errors"):
                print(f"  {c.commit[:8]} {c.subject[:60]!r}: seeded {run.summary()}", flush=True)
                return None
            runs.append(sorted(run.failing))
    if runs[0] != runs[1]:
        print(f"  {c.commit[:8]}: flaky ({len(runs[0])} vs {len(runs[1])} failing)", flush=True)
        return None
    print(f"  {c.commit[:8]} {c.subject[:60]!r}: {len(runs[0])} failing", flush=True)
    return bugs.BugJob(
        f"{name}-{c.commit[:10]}", name, c.v0, c.v1, hunks,
        {rel: sha256_of(t1 / rel) for rel in files},
        {rel: hashlib.sha256(data).hexdigest() for rel, data in seeded.items()},
        tests, runs[0],
        {"repository": repo_url, "commit": c.commit, "subject": c.subject,
         "hunks": len(hunks), "added": c.added, "removed": c.removed, "changed_lines": c.added + c.removed})


def merge(parts: list[str]) -> None:
    """Fold manifests built side by side (--manifest=PART) into the committed one; a part's projects replace theirs."""
    path = bugs.manifest_path()
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"projects": {}, "jobs": []}
    for part in parts:
        more = json.loads(Path(part).read_text(encoding="utf-8"))
        data["jobs"] = [j for j in data["jobs"] if j["project"] not in more["projects"]] + more["jobs"]
        data["projects"].update(more["projects"])
    write(path, data)


def table() -> None:
    """The README's projects table, from the committed manifest."""
    projects, jobs = bugs.read_manifest()
    print("| project | split | licence | releases | runtime deps | test deps | jobs | multi-line/hunk |")
    print("|---|---|---|---|---|---|---|---|")
    for name, p in sorted(projects.items(), key=lambda kv: (kv[1].split, kv[0])):
        mine = [j for j in jobs if j.project == name]
        versions = sorted(p.releases, key=Version)
        print(f"| {name} | {p.split} | {p.license} | {len(versions)}: {versions[0]} - {versions[-1]} | "
              f"{', '.join(p.deps) or '-'} | {', '.join(p.test_deps) or '-'} | {len(mine)} | "
              f"{sum(j.multi for j in mine)} |")
    for split in ("dev", "test"):
        mine = [j for j in jobs if j.split == split]
        print(f"| {split} | | | | | | {len(mine)} | {sum(j.multi for j in mine)} |")
    print(f"| all | | | | | | {len(jobs)} | {sum(j.multi for j in jobs)} |")


def main(argv: list[str]) -> None:
    if argv[0] == "--merge":
        return merge(argv[1:])
    if argv[0] == "--table":
        return table()
    mirror, names = Path(argv[0]), [a for a in argv[1:] if not a.startswith("--")]
    survey = "--survey" in argv
    given = [a.partition("=")[2] for a in argv if a.startswith("--manifest=")]
    path = Path(given[0]) if given else bugs.manifest_path()
    data = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {"projects": {}, "jobs": []}
    for name in names or list(PLAN):
        started = time.monotonic()
        project, jobs = mine(name, PLAN[name], mirror, survey, data["projects"].get(name, {}))
        print(f"{name}: {time.monotonic() - started:.0f} s", flush=True)
        if survey or not jobs:
            continue
        data["jobs"] = [j for j in data["jobs"] if j["project"] != name] + [j.to_json() for j in jobs]
        data["projects"][name] = {"license": project.license, "repository": project.repository,
                                  "split": project.split, "deps": list(project.deps),
                                  "test_deps": list(project.test_deps),
                                  "releases": dict(sorted(project.releases.items()))}
        write(path, data)  # after each project, so a long build keeps what it has


def write(path: Path, data: dict) -> None:
    data["about"] = ("real bugs mined by evals/bugs/build.py from fix commits: each job is a release sdist (V1) with "
                     "the fix reverted from the previous release (V0); coordinates, hashes and numbers only, no code")
    data["jobs"] = sorted(data["jobs"], key=lambda j: j["id"])
    data["projects"] = dict(sorted(data["projects"].items()))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"about": data["about"], "projects": data["projects"], "jobs": data["jobs"]},
                               indent=1) + "\n", encoding="utf-8")
    print(f"{len(data['jobs'])} jobs -> {path}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
