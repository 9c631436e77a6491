"""Eval reports from results.jsonl: pass@1, pass^k, flip rate, Wilson intervals; a table, summary.md, a chart."""

import json
import math
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from rich.table import Table


def wilson(successes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) when n is 0."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass
class ConfigSummary:
    """The figures of one (model, config) over all its runs."""

    model: str
    config: str
    tasks: int = 0
    runs: int = 0
    repeats: int = 0
    """The most repeats any task has (the k of pass^k)."""
    passed: int = 0
    first_try: int = 0
    """Passing runs whose first attempt was the one accepted."""
    gained: int = 0
    """Passing runs that needed more than one attempt (passed - first_try)."""
    pass_at_1: float = 0.0
    """Mean over tasks of the share of its repeats that pass (strict)."""
    pass_lenient: float = 0.0
    pass_hat_k: float = 0.0
    """Share of tasks whose every repeat passes."""
    flip_rate: float | None = None
    """Share of tasks with 2+ repeats whose repeats disagree; None when no task was repeated."""
    ci: tuple[float, float] = (0.0, 1.0)
    """95% Wilson interval of the share of passing runs."""
    mean_steps: float = 0.0
    mean_tokens: float = 0.0
    """Prompt + completion tokens per run."""
    tokens_per_solved: float | None = None
    """Prompt + completion tokens per passing run; None when nothing passed."""
    mean_prompt: float = 0.0
    mean_cached: float = 0.0
    mean_completion: float = 0.0
    mean_seconds: float = 0.0
    median_solved_seconds: float | None = None
    """Median agent seconds of the passing runs; None when nothing passed."""
    timeouts: int = 0
    errors: int = 0
    interventions: dict[str, int] = field(default_factory=dict)


def read_results(path: Path) -> tuple[list[dict], list[str]]:
    """The records of a results.jsonl, plus a note for each line that is not a record (e.g. cut by a kill)."""
    if not path.exists():
        return [], []
    records, problems = [], []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            record = json.loads(line) if line.strip() else None
        except json.JSONDecodeError:
            record = None
        if isinstance(record, dict) and "task" in record:
            records.append(record)
        elif line.strip():
            problems.append(f"{path}:{n} is not a result record; ignored (that run will be done again)")
    return records, problems


def record_key(record: dict) -> tuple:
    """The (task, model, config, repeat) a record belongs to."""
    return (record["task"], record["model"], record["config"], record["repeat"])


def first_try(record: dict) -> bool:
    """Whether a run passed on its first attempt (records older than the field: a pass in one step)."""
    if "first_try" in record:
        return bool(record["first_try"])
    return bool(record["pass_strict"]) and record.get("steps") == 1


def latest(records: list[dict]) -> list[dict]:
    """One record per (task, model, config, repeat): the last one written."""
    keep = {record_key(r): r for r in records}
    return list(keep.values())


LARGE_SUFFIX = " · large tree"


def summarise(records: list[dict]) -> list[ConfigSummary]:
    """One summary per (model, config), in the order they first appear; then, when some runs were on a large tree
    (mutant jobs record `large`), one more per (model, config) over those runs alone, its config named
    `CONFIG · large tree`."""
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for record in latest(records):
        groups[(record["model"], record["config"])].append(record)
    summaries = [_summary(model, config, runs) for (model, config), runs in groups.items()]
    for (model, config), runs in groups.items():
        large = [r for r in runs if on_large_tree(r)]
        if large:
            summaries.append(_summary(model, config + LARGE_SUFFIX, large))
    return summaries


def on_large_tree(record: dict) -> bool:
    """Whether a run was a mutant job in a large tree; records written before runs carried `large` are told by
    their task id, which starts with the project's name."""
    if "large" in record:
        return bool(record["large"])
    if not str(record.get("suite", "")).startswith("mutants"):
        return False
    from pyharness.evals.projects import LARGE_TREE, PROJECTS

    return any(record["task"].startswith(p.name + "-") for p in PROJECTS.values() if p.python_files >= LARGE_TREE)


def _summary(model: str, config: str, runs: list[dict]) -> ConfigSummary:
    by_task: dict[str, list[dict]] = defaultdict(list)
    for run in runs:
        by_task[run["task"]].append(run)
    strict = [[bool(r["pass_strict"]) for r in rs] for rs in by_task.values()]
    repeated = [s for s in strict if len(s) > 1]
    solved = [r for r in runs if r["pass_strict"]]
    passed, first = len(solved), sum(first_try(r) for r in solved)
    interventions: dict[str, int] = defaultdict(int)
    for run in runs:
        for kind, count in run.get("interventions", {}).items():
            interventions[kind] += count
    n = len(runs)
    return ConfigSummary(
        model=model, config=config, tasks=len(by_task), runs=n, repeats=max(len(s) for s in strict), passed=passed,
        first_try=first, gained=passed - first,
        pass_at_1=sum(sum(s) / len(s) for s in strict) / len(strict),
        pass_lenient=sum(sum(bool(r["pass_lenient"]) for r in rs) / len(rs) for rs in by_task.values()) / len(strict),
        pass_hat_k=sum(all(s) for s in strict) / len(strict),
        flip_rate=sum(len(set(s)) > 1 for s in repeated) / len(repeated) if repeated else None,
        ci=wilson(passed, n), mean_steps=_mean(runs, "steps"),
        mean_tokens=_mean(runs, "prompt_tokens", "completion_tokens"),
        tokens_per_solved=_mean(solved, "prompt_tokens", "completion_tokens") if solved else None,
        mean_prompt=_mean(runs, "prompt_tokens"), mean_cached=_mean(runs, "cached_tokens"),
        mean_completion=_mean(runs, "completion_tokens"), mean_seconds=_mean(runs, "wall_seconds"),
        median_solved_seconds=statistics.median(r.get("seconds", 0) or 0 for r in solved) if solved else None,
        timeouts=sum(bool(r.get("timed_out")) for r in runs), errors=sum(r.get("outcome") == "error" for r in runs),
        interventions=dict(sorted(interventions.items(), key=lambda kv: (-kv[1], kv[0]))))


def _mean(runs: list[dict], *keys: str) -> float:
    return sum(sum(r.get(k, 0) or 0 for k in keys) for r in runs) / len(runs) if runs else 0.0


LEGEND = ("Columns: pass@1: mean over tasks of the share of repeats whose stdout matched byte for byte (jobs: the "
          "job's own check); lenient: trailing spaces and blank lines ignored; pass^k: every repeat passed; flip: "
          "share of repeated tasks whose repeats disagree; first try: passing runs whose first attempt was accepted; "
          "gained: passing runs that needed a later attempt; 95% CI: Wilson interval over runs; tokens: prompt + "
          "completion; cached: prompt tokens per run read from the prefix cache; seconds: wall time per run; "
          "s/solved: median agent seconds of a passing run.")
COLUMNS = ("model", "config", "tasks", "runs", "pass@1", "95% CI", "lenient", "pass^k", "flip", "first try", "gained",
           "steps", "tokens/run", "tokens/solved", "cached", "seconds", "s/solved", "timeouts", "errors")


def rows(summaries: list[ConfigSummary]) -> list[list[str]]:
    """The table's cells, as text (shared by the rich table and summary.md)."""
    out = []
    for s in summaries:
        out.append([s.model, s.config, str(s.tasks), str(s.runs), f"{s.pass_at_1:.1%}",
                    f"{s.ci[0]:.0%}–{s.ci[1]:.0%}", f"{s.pass_lenient:.1%}", f"{s.pass_hat_k:.1%} (k={s.repeats})",
                    "–" if s.flip_rate is None else f"{s.flip_rate:.1%}", str(s.first_try), str(s.gained),
                    f"{s.mean_steps:.1f}", f"{s.mean_tokens:.0f}",
                    "–" if s.tokens_per_solved is None else f"{s.tokens_per_solved:.0f}", f"{s.mean_cached:.0f}",
                    f"{s.mean_seconds:.1f}",
                    "–" if s.median_solved_seconds is None else f"{s.median_solved_seconds:.1f}",
                    str(s.timeouts), str(s.errors)])
    return out


def summary_table(summaries: list[ConfigSummary], title: str) -> Table:
    """A rich table with one column per (model, config) and one row per figure (narrow enough for a terminal)."""
    table = Table(title=title)
    table.add_column("")
    for s in summaries:
        table.add_column(f"{s.model}\n{s.config}", justify="right")
    cells = rows(summaries)
    for n, name in enumerate(COLUMNS[2:], 2):
        table.add_row(name, *(row[n] for row in cells))
    return table


def intervention_lines(summaries: list[ConfigSummary]) -> list[str]:
    """One line per (model, config) listing harness interventions by kind."""
    lines = []
    for s in summaries:
        kinds = ", ".join(f"{k} {n}" for k, n in s.interventions.items()) or "none"
        lines.append(f"{s.model} / {s.config}: {kinds}")
    return lines


def write_summary_md(path: Path, summaries: list[ConfigSummary], records: list[dict], title: str,
                     notes: list[str] = ()) -> None:
    """summary.md: the table, the interventions, a task-by-configuration grid and notes."""
    runs = latest(records)
    lines = [f"# {title}", "", "| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(summaries)]
    lines += ["", LEGEND, "", "## Harness interventions", ""]
    lines += [f"- {line}" for line in intervention_lines(summaries)]
    columns = [(s.model, s.config) for s in summaries]
    grid: dict[str, dict[tuple[str, str], list[bool]]] = defaultdict(lambda: defaultdict(list))
    for run in sorted(runs, key=lambda r: r.get("order", 0)):
        grid[run["task"]][(run["model"], run["config"])].append(bool(run["pass_strict"]))
    lines += ["", "## Tasks (strict passes / repeats)", "",
              "| task | " + " | ".join(f"{m} {c}" for m, c in columns) + " |", "|---|" + "---|" * len(columns)]
    for task in sorted(grid):
        cells = [f"{sum(grid[task][col])}/{len(grid[task][col])}" if grid[task][col] else "" for col in columns]
        lines.append(f"| {task} | " + " | ".join(cells) + " |")
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def write_chart(path: Path, summaries: list[ConfigSummary], title: str) -> str:
    """chart.png: pass@1 (with its Wilson interval) against mean tokens per run; returns a note."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "chart skipped: matplotlib is not installed (pip install matplotlib)"
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for s in summaries:
        low, high = s.ci
        below, above = max(0.0, s.pass_at_1 - low), max(0.0, high - s.pass_at_1)
        ax.errorbar([s.mean_tokens], [s.pass_at_1], yerr=[[below], [above]], fmt="o", capsize=4)
        ax.annotate(f"{s.model}\n{s.config}", (s.mean_tokens, s.pass_at_1), textcoords="offset points",
                    xytext=(6, 4), fontsize=8)
    ax.set_xlabel("mean tokens per run (prompt + completion)")
    ax.set_ylabel("pass@1 (strict), 95% Wilson interval")
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlim(0, max(s.mean_tokens for s in summaries) * 1.4 or 1)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return f"chart: {path}"


def write_reports(out: Path, records: list[dict], title: str, notes: list[str] = ()) -> tuple[list[ConfigSummary], str]:
    """summary.md and chart.png under OUT; returns the summaries and the chart's note."""
    summaries = summarise(records)
    write_summary_md(out / "summary.md", summaries, records, title, notes)
    return summaries, write_chart(out / "chart.png", summaries, title) if summaries else "chart skipped: no results"
