"""The trials' schedules: which candidates they ask for, in order (kind@temperature), per mode and by name
(`ph eval --configs schedule=NAME`), and the one a run asks when none is given."""

from pyharness.harness.pipeline import HarnessConfig
from pyharness.models.base import Model

DEFAULT_SCHEDULE = "plain@0,plain@0.8,repair@0.5,plan@0.6,plain@1.0,repair@0.8,plan@0.9,plain@0.9"
"""The order candidates are asked for in (kind@temperature); the first is the greedy plain request (what the model
alone is asked). Passes after the first come from samples, and a greedy repair straight after the greedy attempt
sends the same code back (docs/results.md, the stdout tasks outside slice20), so repairs come later and warmer."""
FIX_SCHEDULE = "plain@0,line@0,plain@0.8,line@0.7,repair@0.5,plan@0.6,plain@1.0,repair@0.8"
"""fix mode also asks for the wrong line in words (`line`): in the loop, a 1.5B model named the right line in prose
more often than it rewrote the function right."""
PRESETS: dict[str, dict[str, str]] = {
    "default": {},
    "spec": {"fix": "plain@0,line@0,spec@0,line@0.7,spec@0.7,repair@0.5,spec@1.0,plan@0.6"},
    "guesses": {"fix": "plain@0,guesses@0,plain@0.8,guesses@0.7,repair@0.5,plan@0.6,plain@1.0,guesses@1.0"},
    "vote": {"stdout": DEFAULT_SCHEDULE + ",vote@0.8,vote@0.8,vote@1.0,vote@1.0"},
    "doubt": {"stdout": DEFAULT_SCHEDULE + ",confirm@0.8,confirm@0.8,confirm@1.0,confirm@1.0"},
    "long": {"fix": FIX_SCHEDULE + ",plain@0.9,line@1.0,repair@0.7,plan@0.8,plain@1.1,line@0.8,repair@1.0,plain@0.6"},
}
"""Named schedules per mode, for `ph eval --configs schedule=default,spec` (a mode a preset leaves out keeps its
default): a schedule change is measured against the current one in one interleaved run. `long` asks fix mode for
16 candidates: on real projects' mutants most runs ended with the 8-candidate schedule spent and half the time budget
left (the step budget must allow 16 too)."""
CLOZE_SCHEDULE = ("cloze@0.8,cloze@0.8,plain@0,cloze@0.8,line@0,cloze@0.8,cloze@0.8,plain@0.8,cloze@0.8,repair@0.5,"
                  "cloze@0.8,cloze@0.8,cloze@0.8,cloze@0.8")
"""fix mode's schedule with the harness layer `cloze` (`pyharness.trials.cloze`: a suspect statement masked and filled,
SAMPLES fills a round, one step): a round costs a fraction of a whole-function candidate on real code and cannot copy
the bug, so the two best-ranked statements go first; the whole-function framings stay for bugs of more than a line.
The last four rounds are reached with the layer `deepcloze` (its rounds spend no step), or with a step budget over 8.
Without the layer, or with a model that has no fill-in-the-middle, fix mode asks FIX_SCHEDULE (a schedule that names
cloze rounds asks such a model in chat: `cloze.sample_hole`)."""


def default_schedule(mode: str, harness: HarnessConfig, model: Model) -> str:
    """The mode's schedule: fix mode's with cloze rounds when the layer `cloze` is on and the model fills holes
    natively (asked in chat, a masked line seldom comes back right: docs/results.md)."""
    if mode != "fix":
        return DEFAULT_SCHEDULE
    return CLOZE_SCHEDULE if harness.on("cloze") and getattr(model, "fim", False) else FIX_SCHEDULE

