"""`ph eval`: run an eval suite over tasks, models and configurations, and report."""

from pathlib import Path
from typing import Annotated

import typer

from pyharness.cli.app import app, fail
from pyharness.cli.options import (
    JsonOpt,
    OnOpt,
    PerServerOpt,
    RayAddressOpt,
    RetriesOpt,
    SandboxOpt,
    ScheduleOpt,
    StepsOpt,
    ThreadsOpt,
    agent_config,
    positive,
    use_sandbox,
)

EXAMPLES = ("Example: ph eval jobs --model ollama:qwen2.5-coder:7b --configs harness=on,off --repeat 3\n\n"
            "On servers through Ray: ph eval stdout --on ray --model openai:qwen@http://10.0.0.1:8000/v1,"
            "http://10.0.0.2:8000/v1 --per-server 8")


@app.command("eval", epilog=EXAMPLES)
def eval_(
    suite: Annotated[
        str, typer.Argument(help="stdout, humaneval, jobs, mutants (mutants:dev, mutants:all), bugs (bugs:dev, "
                            "bugs:all), or a folder of your own: stdout task files and/or job folders (job.json + "
                            "repo/).")
    ],
    tasks: Annotated[
        str | None, typer.Option("--tasks", help="Glob on task ids (commas for several), or @FILE listing ids.")
    ] = None,
    model: Annotated[
        list[str] | None,
        typer.Option(
            "--model", "-m", help="Model spec; repeat to compare models. scripted:DIR reads DIR/<task id>.json."
        ),
    ] = None,
    repeat: Annotated[int, typer.Option("--repeat", min=1, help="Runs of each task per configuration.")] = 1,
    configs: Annotated[
        list[str] | None,
        typer.Option(
            "--configs",
            help="Configurations, e.g. harness=on,off (axes: harness; protocol text, json = schema-held JSON "
                 "replies, oneshot = one reply, no harness; "
                 "schedule, a trials preset; without=LAYER, harness=on with one layer off; LAYER+LAYER for several).",
        ),
    ] = None,
    workers: Annotated[int, typer.Option("--workers", min=1, help="Tasks run in parallel threads.")] = 1,
    out: Annotated[Path | None, typer.Option("--out", help="Results folder (default out/eval-SUITE).")] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check",
            help="Sanity-check every task first (reference passes, "
            "empty fails); failing tasks are listed and left out.",
        ),
    ] = False,
    max_steps: StepsOpt = 20,
    max_seconds: Annotated[
        float, typer.Option("--max-seconds", callback=positive, help="Wall-clock budget per run, in seconds.")
    ] = 900.0,
    retry_errors: Annotated[
        bool, typer.Option("--retry-errors", help="Run again the runs that ended in a model error.")
    ] = False,
    schedule: ScheduleOpt = None,
    from_path: Annotated[
        Path | None,
        typer.Option("--from", help="mutants only: build the jobs from a local project with a tests folder."),
    ] = None,
    sandbox: SandboxOpt = True,
    python: Annotated[
        str | None,
        typer.Option("--python", help="The Python that runs every job's code and tests (default: a job's own "
                     "environment where it has one, as the bugs suite's jobs do, else ph's own)."),
    ] = None,
    on: OnOpt = "local",
    ray_address: RayAddressOpt = None,
    per_server: PerServerOpt = None,
    retries: RetriesOpt = None,
    threads: ThreadsOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """Run an eval suite: each task x model x configuration x repeat, interleaved, resumable, with a report."""
    from concurrent.futures import ThreadPoolExecutor

    from rich.console import Console

    from pyharness.cli.evalview import EvalView, show_errors
    from pyharness.errors import ModelError, UserError
    from pyharness.evals.configs import parse_configs
    from pyharness.evals.mutants import mutant_counts
    from pyharness.evals.report import intervention_lines, latest, read_results, summary_table, write_reports
    from pyharness.evals.runner import EvalPlan, Models, pending, plan_records, run_eval
    from pyharness.evals.suites import check_task, load_suite
    from pyharness.evals.tasks import select

    console = Console(soft_wrap=True, highlight=False, stderr=json_out)  # --json: stdout holds only the object
    notes: list[str] = []
    fanout = None
    err = Console(stderr=True, highlight=False, soft_wrap=True)
    as_json = "eval" if json_out else None
    folder = out
    use_sandbox(sandbox, as_json)
    try:
        ray_only = {"--ray-address": ray_address, "--per-server": per_server, "--retries": retries,
                    "--threads": threads}
        given = [name for name, value in ray_only.items() if value is not None]
        if on != "ray" and given:
            raise UserError(f"{given[0]} goes with --on ray")
        if on == "ray":
            from pyharness.evals.fanout import import_ray

            import_ray()  # not installed: the one line that says how, before anything runs
        plan_configs = parse_configs(configs)
        interpreter = None
        if python:
            from pyharness.workspace.interpreter import choose

            interpreter = choose(None, (python, "--python"))
        if from_path is not None:
            from pyharness.evals.mutants import local_jobs
            from pyharness.evals.tasks import Suite

            if suite != "mutants":
                raise UserError("--from goes with the mutants suite: ph eval mutants --from PATH")
            loaded = Suite(f"mutants-{Path(from_path).resolve().name}",
                           local_jobs(from_path, progress=lambda text: err.print(text, markup=False)))
        else:
            loaded = load_suite(suite)
        for problem in loaded.problems:
            err.print(f"[yellow]skipped[/yellow] {problem}")
        chosen = select(loaded.tasks, tasks)
        if check:
            with ThreadPoolExecutor(max_workers=4) as pool:
                verdicts = list(pool.map(check_task, chosen))
            bad = {v.task for v in verdicts if not v.ok}
            for verdict in verdicts:
                if not verdict.ok:
                    err.print(f"[red]excluded[/red] {verdict.task}: {verdict.note}")
            console.print(
                f"check: {len(verdicts) - len(bad)}/{len(verdicts)} tasks sound"
                + (f", {len(bad)} excluded" if bad else "")
            )
            chosen = [t for t in chosen if t.id not in bad]
            if loaded.name.startswith("mutants"):
                for line in mutant_counts(chosen):
                    console.print(line, markup=False)
            if loaded.name.startswith("bugs"):
                from pyharness.evals.bugs import bug_counts

                for line in bug_counts(chosen, dropped=[v.note for v in verdicts if not v.ok]):
                    console.print(line, markup=False)
            if not model:
                code = 1 if bad or loaded.problems else 0
                if json_out:
                    from pyharness.cli.jsonview import write

                    write({"command": "eval", "suite": loaded.name, "exit_code": code, "checked": len(verdicts),
                           "excluded": {v.task: v.note for v in verdicts if not v.ok}, "problems": loaded.problems})
                raise typer.Exit(code)
        if not model:
            raise UserError("name a model: --model llamacpp:qwen2.5-coder-1.5b, ollama:NAME or scripted:PATH")
        if not chosen:
            raise UserError("no tasks left to run")
        models = Models(model) if on == "local" else None
        if models is not None and models.in_process and workers > 1:
            err.print("note: a llama.cpp model runs in this process and cannot serve two threads: using 1 worker")
            workers = 1
        if on == "ray" and workers > 1:
            err.print("note: --workers is for --on local; on Ray the CPUs and --per-server set the runs at once")
        folder = out or Path("out") / f"eval-{loaded.name}"
        plan = EvalPlan(loaded.name, chosen, model, plan_configs, repeat,
                        agent_config(max_steps, max_seconds, schedule), python=interpreter)
        todo = len(pending(plan, folder / "results.jsonl", retry_errors))
        console.print(
            f"eval {loaded.name}: {len(chosen)} tasks x {len(model)} model(s) x {len(plan_configs)} "
            f"config(s) x {repeat} repeat(s) -> {folder}"
            + (f" (resuming: {todo} runs left)" if (folder / "results.jsonl").exists() else "")
        )
        with EvalView(todo, with_model=len(model) > 1, console=err) as view:
            if models is not None:
                run_eval(plan, folder, models, workers=workers, retry_errors=retry_errors, on_result=view)
            else:
                from rich.markup import escape

                from pyharness.evals.fanout import run_on_ray

                fanout = run_on_ray(plan, folder, address=ray_address, per_server=per_server or 1,
                                    retries=2 if retries is None else retries, threads=threads,
                                    retry_errors=retry_errors, on_result=view)
                notes = fanout.notes
                for note in notes:
                    err.print(f"[yellow]note[/yellow] {escape(note)}")
    except (ModelError, UserError, ValueError) as error:
        fail(str(error), json_command=as_json)
        return
    except KeyboardInterrupt:
        fail(
            "interrupted"
            + (f"; finished runs are in {folder / 'results.jsonl'}: run the same command to resume" if folder else ""),
            130,
            json_command=as_json,
        )
        return
    records, problems = read_results(folder / "results.jsonl")
    for problem in problems:
        err.print(f"[yellow]note[/yellow] {problem}")
    title = f"ph eval {loaded.name}"
    summaries, chart = write_reports(folder, plan_records(plan, records), title, notes=loaded.problems + notes)
    console.print(summary_table(summaries, title))
    for line in intervention_lines(summaries):
        console.print(f"interventions {line}")
    show_errors(err, latest(plan_records(plan, records)))
    console.print(f"results: {folder / 'results.jsonl'}\nsummary: {folder / 'summary.md'}\n{chart}")
    if json_out:
        from pyharness.cli.jsonview import summaries_object, write

        write(summaries_object(loaded.name, summaries, folder))
    if fanout is not None and fanout.left:
        fail(f"{fanout.left} run(s) not run: every server of their model was taken out; run the same command again "
             "when one is back")
