"""Judging candidates: each distinct code is checked once, in a scratch copy of the workspace (never the user's
tree), after the harness's own fixes (standard-library imports); code sent back unchanged gets the verdict the code
as it was got, without a run."""

import hashlib
from dataclasses import dataclass, field

from pyharness.actions.base import Observation
from pyharness.harness.imports import undefined_names, with_stdlib_imports
from pyharness.harness.lint import empty_functions
from pyharness.trials.brief import Brief, TrialsRecord
from pyharness.trials.candidates import AddTarget, StdoutTarget
from pyharness.trials.suspects import FixTarget
from pyharness.trials.verdicts import Verdict, check_in_scratch, one_line

Target = StdoutTarget | FixTarget | AddTarget
"""What a job's candidates are: the whole main.py, the suspect functions, or the new file with its test."""


@dataclass
class Candidate:
    """A candidate: where it came from, the code the model wrote, the files it makes, and its verdict."""

    origin: str
    code: str = ""
    files: dict[str, str] = field(default_factory=dict)
    verdict: Verdict = field(default_factory=lambda: Verdict(False, failure="nothing was tried yet"))
    number: int = 0
    """Which distinct candidate run this code was (1: the first); 0 when it was not run."""
    imports: dict[str, list[str]] = field(default_factory=dict)
    """The standard-library imports the harness added before the check, by file (layer `stdimports`)."""


class Judge:
    """Checks the trials' candidates and remembers each distinct code's verdict; `before` is the code as it was."""

    def __init__(self, brief: Brief, record: TrialsRecord):
        self.brief, self.state, self.record = brief, brief.state, record
        self.ws, self.job, self.ctx = brief.ws, brief.job, brief.ctx
        self.seen: dict[str, Candidate] = {}
        self.before = Candidate("before")

    def rebase(self, candidate: Candidate) -> None:
        """`candidate` is in the tree now: it is the code as it is, and what was checked on the old tree is forgotten
        (a cloze fill's verdict is keyed by its one file, and another file has changed under it)."""
        self.before = candidate
        self.seen.clear()

    def before_of(self, target: Target) -> Candidate:
        """The code as it is: what every kept candidate must beat (stdout with no main.py: nothing at all)."""
        if self.job.mode == "stdout" and not (self.ws.root / "main.py").is_file():
            return Candidate("before", verdict=Verdict(False, passed=-1, failures=1, failure="no main.py"))
        if isinstance(target, AddTarget):  # the new test belongs to every candidate, and to the code before too
            return Candidate("before", verdict=self.check(target, {target.test_path: target.test}))
        self.ws.emit("phase", name="checking the code as it is")
        return Candidate("before", verdict=self.check(target, {}))

    def candidate(self, target: Target, origin: str, code: str | None,
                  files: dict[str, str] | None = None) -> Candidate:
        """Check one candidate's code in a scratch copy (once per distinct code) and say what came of it; `files`,
        when given, are the candidate's files as they are (a cloze fill: the whole file)."""
        candidate = Candidate(origin, code or "")
        if self.state.out_of_time():
            candidate.verdict = Verdict(False, failure="not run: the time budget ended this reply")
        elif code is None:
            candidate.verdict = Verdict(False, failure="the reply held no code block")
        else:
            key = hashlib.sha256(code.strip().encode()).hexdigest()
            if key in self.seen:
                self.record.duplicates += 1
                self.state.count("trials.duplicate", f"same code as {self.seen[key].origin}")
                candidate.verdict, candidate.files = self.seen[key].verdict, self.seen[key].files
                candidate.number, candidate.code = self.seen[key].number, self.seen[key].code
                candidate.imports = self.seen[key].imports
            else:
                candidate.code, candidate.files, candidate.imports = (
                    (code, files, {}) if files is not None else self.apply(target, code))
                if candidate.imports:
                    self.record.imports_added[origin] = candidate.imports
                    self.state.count("trials.imports", "; ".join(line for lines in candidate.imports.values()
                                                             for line in lines))
                self.ws.emit("phase", name=f"checking candidate {origin}")
                candidate.verdict = self.verdict(target, code, candidate.files)
                self.seen[key] = candidate
                self.record.run += 1
                self.state.result.attempts += 1
                candidate.number = self.record.run
        self.record.attempts.append(f"{origin}: " + ("pass" if candidate.verdict.green else
                                                        one_line(candidate.verdict.failure)))
        self.brief.emit("observation", observation=Observation(f"{origin}: " + (
            "all checks pass" if candidate.verdict.green else candidate.verdict.failure), ok=candidate.verdict.green),
                       interventions=list(self.state.notes))
        return candidate

    def apply(self, target: Target, code: str) -> tuple[str, dict[str, str], dict[str, list[str]]]:
        """The candidate's code, its files, and the imports added to them: with the layer `stdimports`, those its
        undefined standard-library names need, before any check (a whole-file candidate, stdout's main.py or add's
        new file, in its code; fix mode's functions at the top of the file they are merged into, for the names the
        file as it is does not already lack)."""
        if not self.brief.harness.on("stdimports"):
            return code, target.apply(code, self.ws), {}
        if not isinstance(target, FixTarget):
            code, added = with_stdlib_imports(code)
            where = target.path if isinstance(target, AddTarget) else "main.py"
            return code, target.apply(code, self.ws), {where: added} if added else {}
        files, imports = target.apply(code, self.ws), {}
        for rel, text in files.items():
            lacking = self.ws.cache.derive(self.ws.root / rel, "undefined", undefined_names)  # once per version
            files[rel], added = with_stdlib_imports(text, skip=lacking or ())
            if added:
                imports[rel] = added
        return code, files, imports

    def verdict(self, target: Target, code: str, files: dict[str, str]) -> Verdict:
        if files and all((self.ws.root / rel).is_file() and self.ws.read_text(rel) == text
                         for rel, text in files.items()):
            was = self.before.verdict  # the same code: the same verdict, without running it again
            return Verdict(False, was.passed, was.failures, was.errors,
                           f"unchanged: the reply sends back the code as it is, which fails: {was.failure}")
        if not files:
            units = target.units if isinstance(target, FixTarget) else []
            names = ", ".join(u.name for u in units) or "the suspect function"
            return Verdict(False, failure=f"the reply did not contain {names} (reply with the whole function)")
        empty = [name for text in files.values() for name in empty_functions(text)]
        if empty:
            return Verdict(False, failure=f"{', '.join(empty)} has no body (only a docstring or pass)")
        return self.check(target, files)

    def check(self, target: Target, files: dict[str, str], whole: bool = False) -> Verdict:
        """Apply `files` in a fresh scratch copy of the workspace and run the mode's check there (with `whole`, fix
        mode's whole suite even when no failing test passes)."""
        return check_in_scratch(self.ws, self.job, self.ctx, target.checks, files, whole)
