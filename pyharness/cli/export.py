"""`ph export sft|dpo` (training data from recorded runs) and `ph distill` (harness-aware distillation pairs)."""

from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli.app import app, fail
from pyharness.cli.options import RepoOpt, SandboxOpt, ScheduleOpt, StepsOpt, agent_config, positive, use_sandbox

export_app = typer.Typer(no_args_is_help=True, help="Training data from recorded runs, as JSONL.")
app.add_typer(export_app, name="export")

RunsArg = Annotated[
    list[Path],
    typer.Argument(help="Transcripts (.ph/runs/*.jsonl), folders of them (e.g. evals/results), or .tar.gz archives."),
]
OutOpt = Annotated[Path, typer.Option("--out", help="The JSONL file to write.")]
ForeignOpt = Annotated[
    bool,
    typer.Option("--allow-foreign", help="Also export runs made in another repo than this one (refused by default)."),
]


@export_app.command("sft", epilog="Example: ph export sft .ph/runs evals/results --out sft.jsonl")
def export_sft(runs: RunsArg, out: OutOpt, repo: RepoOpt = None, allow_foreign: ForeignOpt = False) -> None:
    """Chat examples {"messages": [...]}: each accepted loop step's prompt -> the canonical call the harness ran, and
    each passing trial candidate's request -> its code."""
    from pyharness.export.training import sft_rows

    _export(runs, out, repo, allow_foreign, sft_rows, "sft", "example(s)")


@export_app.command("dpo", epilog="Example: ph export dpo evals/results --out dpo.jsonl")
def export_dpo(runs: RunsArg, out: OutOpt, repo: RepoOpt = None, allow_foreign: ForeignOpt = False) -> None:
    """Preference pairs {"prompt", "chosen", "rejected"}: a passing trial candidate against a failing one for the same
    request, and a repaired call in canonical form against the raw reply it was mended from."""
    from pyharness.export.training import dpo_rows

    _export(runs, out, repo, allow_foreign, dpo_rows, "dpo", "pair(s)")


def _export(paths: list[Path], out: Path, repo: Path | None, allow_foreign: bool, rows, kind: str, noun: str) -> None:
    from pyharness.cli.console import inert
    from pyharness.cli.options import repo_root
    from pyharness.errors import UserError
    from pyharness.export.runlog import foreign, read_runs
    from pyharness.export.training import Tally, write_rows

    try:
        working = repo_root(repo)
        runs, skipped = read_runs(paths)
    except (UserError, OSError) as err:
        fail(str(err))
        return
    if not runs:
        fail(f"no ph transcripts in {', '.join(str(p) for p in paths)}")
    strangers = [why for why in (foreign(run, working) for run in runs) if why]
    if strangers and not allow_foreign:
        more = f" (and {len(strangers) - 3} more)" if len(strangers) > 3 else ""
        fail(f"{len(strangers)} run(s) from another repo: {'; '.join(strangers[:3])}{more}. Nothing was written; "
             "export them from their own repo, or pass --allow-foreign")
    tally = Tally()
    write_rows(rows(runs, tally), out)
    for note in skipped:
        typer.echo(f"ph: skipped {inert(note)}", err=True)
    lines = tally.lines(noun)
    typer.echo(inert(f"{kind}: {lines[0]} -> {out}" + (f"; {len(strangers)} from other repos" if strangers else "")))
    for line in lines[1:]:
        typer.echo(inert(line))


@app.command(epilog="Example: ph distill jobs --teacher openai:qwen2.5-coder-32b@http://gpu-box:8000/v1 "
                    "--model llamacpp:qwen2.5-coder-1.5b")
def distill(
    suite: Annotated[str, typer.Argument(help="stdout, humaneval, jobs, mutants (mutants:dev, ...) or a task folder.")],
    teacher: Annotated[str, typer.Option("--teacher", help="The teacher: any model spec (ollama:, openai:, llamacpp:, "
                                                          "scripted:).")],
    model: Annotated[
        str | None,
        typer.Option("--model", "-m", help="The student, run in the loop (default: Ollama's default model if it "
                     "answers, else the embedded pack; scripted:DIR reads DIR/<task id>.json)."),
    ] = None,
    tasks: Annotated[str | None, typer.Option("--tasks", help="Glob on task ids (commas: several) or @FILE.")] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the runs, sft.jsonl and distill.json "
                                             "(default out/distill-SUITE; must not hold an earlier run).")] = None,
    max_steps: StepsOpt = 20,
    max_seconds: Annotated[
        float, typer.Option("--max-seconds", callback=positive, help="Wall-clock budget per run, in seconds.")
    ] = 900.0,
    schedule: ScheduleOpt = None,
    sandbox: SandboxOpt = True,
) -> None:
    """Harness-aware distillation: run the suite with the student in the loop, ask the teacher at each loop step with
    and without the harness's additions, keep the steps where its action differs and the record agrees."""
    from pyharness.cli.console import inert
    from pyharness.errors import ModelError, UserError
    from pyharness.evals.configs import parse_configs
    from pyharness.evals.runner import EvalPlan, Models
    from pyharness.evals.suites import load_suite
    from pyharness.evals.tasks import select
    from pyharness.export.distill import Distiller, StudentTap, run_distill
    from pyharness.models.resolve import auto_model, resolve_model

    use_sandbox(sandbox)
    log: list = []
    try:
        loaded = load_suite(suite)
        chosen = select(loaded.tasks, tasks)
        if not chosen:
            raise UserError("no tasks to run")
        folder = out or Path("out") / f"distill-{loaded.name}"
        if (folder / "results.jsonl").exists():
            raise UserError(f"{folder} holds an earlier run: give another --out (a distill run does not resume)")
        folder.mkdir(parents=True, exist_ok=True)
        student = model or auto_model()[0].name
        models = Models([student], resolve=lambda spec: StudentTap(resolve_model(spec), log))
        same = teacher == student and student in models.loaded  # one model as both: loaded once
        teacher_model = models.loaded[student].student if same else resolve_model(teacher)
        plan = EvalPlan(loaded.name, chosen, [student], parse_configs(None),
                        agent=agent_config(max_steps, max_seconds, schedule))
        typer.echo(inert(f"distill {loaded.name}: {len(chosen)} task(s), student {student}, teacher "
                         f"{teacher_model.name} -> {folder}"))
        distiller = Distiller(teacher_model, log, folder / "sft.jsonl")

        def progress(record: dict, rows: list) -> None:
            typer.echo(inert(f"[{distiller.summary.runs}/{len(chosen)}] {record['task']}: {record['outcome']}, "
                             f"{len(rows)} step(s) kept"), err=True)

        summary = run_distill(plan, folder, models, distiller, on_run=progress)
    except (ModelError, UserError, ValueError) as err:
        fail(str(err))
        return
    except KeyboardInterrupt:
        fail("interrupted", 130)
        return
    for line in summary.lines():
        typer.echo(inert(line))
    typer.echo(inert(f"examples: {folder / 'sft.jsonl'}\nsummary: {folder / 'distill.json'}"))
