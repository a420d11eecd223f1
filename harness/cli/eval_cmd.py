"""``harness eval``: run tasks on a model, print per-bucket tables and gaps, write results."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from harness.errors import TRACEBACK_ENV, HarnessError


def _batch_size(value: str) -> int | Literal["auto"]:
    if value == "auto":
        return "auto"
    try:
        n = int(value)
    except ValueError:
        raise typer.BadParameter(
            "expected a positive integer or 'auto'", param_hint="--batch-size"
        ) from None
    if n < 1:
        raise typer.BadParameter("expected a positive integer or 'auto'", param_hint="--batch-size")
    return n


def eval_command(
    model: Annotated[
        str, typer.Option(help="Model, e.g. hf:smollm2-135m, hf:./dir, hf:org/name.")
    ],
    tasks: Annotated[
        list[str], typer.Option(help="Tasks or suites (repeatable, comma-separated).")
    ],
    limit_per_bucket: Annotated[  # noqa: UP007
        int | None, typer.Option(min=1, help="At most this many items per bucket.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Run seed (items, few-shot draws, bootstrap).")] = 0,
    output_dir: Annotated[  # noqa: UP007
        Path | None,
        typer.Option(help="Where results.json and samples/ go (default: runs/latest, which "
                          "each run replaces).")
    ] = None,
    model_args: Annotated[str, typer.Option(help="Backend args: key=value,key=value.")] = "",
    batch_size: Annotated[str, typer.Option(help="Batch size: a number or 'auto'.")] = "auto",
    apply_chat_template: Annotated[
        bool, typer.Option(help="Format prompts with the model's chat template.")
    ] = False,
    templates: Annotated[  # noqa: UP007
        str | None, typer.Option(help="Template ids (comma-separated) or 'all'.")
    ] = None,
    num_fewshot: Annotated[  # noqa: UP007
        int | None, typer.Option(min=0, help="Override each task's few-shot k.")
    ] = None,
    fewshot_shared: Annotated[  # noqa: UP007
        bool | None,
        typer.Option(
            "--fewshot-shared/--fewshot-per-item",
            help="Same exemplars for every item (a prefix the backend computes once), "
            "or a draw per item; default: each task's fewshot.shared.",
        ),
    ] = None,
    matched_control: Annotated[
        bool,
        typer.Option(
            "--matched-control",
            help="Also answer each OOD item with exemplars from its own bucket (condition "
            "'matched'), splitting the ID-OOD gap into difficulty + exemplar shift; tasks "
            "with exemplars and no declared conditions.",
        ),
    ] = False,
    horizon: Annotated[
        bool,
        typer.Option(
            "--horizon",
            help="Also search, past the buckets, for d50: the difficulty where accuracy falls "
            "halfway from the ID level to the item baseline, with a 95% interval (tasks with a "
            "horizon: key).",
        ),
    ] = False,
    max_answer_tokens: Annotated[  # noqa: UP007
        int | None,
        typer.Option("--max-answer-tokens", min=1,
                     help="Cap every answer budget at this many tokens (budgets otherwise fit "
                     "each bucket's longest target in the model's tokens): a quick look on a "
                     "slow machine; answers cut there are marked cut and budget-bound."),
    ] = None,
    horizon_items: Annotated[
        int | None,
        typer.Option("--horizon-items", min=10,
                     help="Answers the horizon search may spend per template and condition "
                     "(default: each task's horizon.items)."),
    ] = None,
    replay: Annotated[  # noqa: UP007
        list[Path] | None,
        typer.Option(help="A finished run of this model (repeatable): its answers are reused for "
                          "the same prompts instead of asking the model again (same weights, "
                          "task spec and direct strategy).")
    ] = None,
    include_path: Annotated[  # noqa: UP007
        list[Path] | None, typer.Option(help="Extra task folder (repeatable).")
    ] = None,
    strategy: Annotated[
        str, typer.Option(help="direct, cot, least_to_most, self_ask.")
    ] = "direct",
    cache: Annotated[
        bool,
        typer.Option(
            "--cache/--no-cache",
            help="Reuse and store responses in the response cache "
            "(resumes interrupted runs).",
        ),
    ] = True,
    cache_dir: Annotated[  # noqa: UP007
        Path | None,
        typer.Option(
            help="Response cache folder (default: $GENHARNESS_RESPONSE_CACHE, "
            "else responses/ in the harness cache).",
        ),
    ] = None,
    chunk_size: Annotated[
        int, typer.Option(min=1, help="Prompts per model call; samples are written after each.")
    ] = 8192,
    data_parallel: Annotated[
        int, typer.Option(min=1, help="Model replicas in separate processes (e.g. one per GPU).")
    ] = 1,
    overwrite: Annotated[
        bool, typer.Option(help="Replace another run's results in --output-dir (a rerun of the "
                                "same options resumes without it).")
    ] = False,
    target_ci: Annotated[  # noqa: UP007
        float | None, typer.Option(
            help="Add items per bucket in rounds (doubling from --first-round, at most "
                 "--limit-per-bucket, default 1000) until pooled ID and OOD accuracy of every "
                 "task are within +- this (e.g. 0.05); see docs/statistics.md.")
    ] = None,
    first_round: Annotated[int, typer.Option(help="Items per bucket in the first round of "
                                                  "--target-ci.")] = 10,
    restrict_paths: Annotated[
        bool, typer.Option("--restrict-paths", help="Task files may read local files "
                           "(include:, source.path) only inside their own folder and "
                           "$GENHARNESS_DATA.")
    ] = False,
    keep_going: Annotated[
        bool, typer.Option("--keep-going", help="Run the tasks that pass their checks when "
                           "others fail them (default: a task failing the checks harness "
                           "tasks validate makes stops the run before the model loads).")
    ] = False,
    traceback: Annotated[
        bool, typer.Option("--traceback", help="Print the stack of a task's failure (a "
                           "plugin's generator, extractor or metric) under its one-line "
                           "error; the same as GENHARNESS_TRACEBACK=1.")
    ] = False,
) -> None:
    """Evaluate a model on tasks; print per-bucket accuracy and gaps; write results."""
    import os

    from harness.cli.run_tables import print_results
    from harness.config import RunConfig
    from harness.models.backends import parse_model_args
    from harness.run.evaluate import evaluate
    from harness.run.results import Results, TaskResult
    from harness.strategies import check_strategy

    if os.environ.get("WORLD_SIZE", "1").strip() not in ("", "1"):
        raise HarnessError(
            "harness eval starts its own model workers: run it once with --data-parallel N "
            "instead of under accelerate launch / torchrun (WORLD_SIZE is set)"
        )
    check_strategy(strategy)
    if traceback:
        os.environ[TRACEBACK_ENV] = "1"
    if restrict_paths:
        from harness.sources.paths import restrict_paths as _restrict

        _restrict()
    if output_dir is None:  # the default folder holds whatever ran last
        output_dir, overwrite = Path("runs/latest"), True
    bs = _batch_size(batch_size)
    cfg = RunConfig(
        model=model, model_args=parse_model_args(model_args), tasks=tasks, seed=seed,
        limit_per_bucket=limit_per_bucket,
        templates=[t.strip() for t in templates.split(",") if t.strip()] if templates else None,
        num_fewshot=num_fewshot, fewshot_shared=fewshot_shared, matched_control=matched_control,
        horizon=horizon or horizon_items is not None, horizon_items=horizon_items,
        max_answer_tokens=max_answer_tokens, replay=replay or [],
        apply_chat_template=apply_chat_template,
        batch_size=bs, output_dir=output_dir, include_paths=include_path or [],
        strategy=strategy, use_cache=cache, cache_dir=cache_dir, data_parallel=data_parallel,
        chunk_size=chunk_size,
    )
    from rich.console import Console

    from harness.cli.run_tables import print_footer, print_header, print_task
    from harness.run.progress import RichReporter

    console = Console()
    shown: list[str] = []

    def table(task: TaskResult) -> None:  # the header goes above the first table
        if not shown:
            print_header(model, seed, console)
        shown.append(task.task)
        print_task(task, console)

    def one(c: RunConfig, replace: bool, tables: bool = False) -> Results:
        return evaluate(c, on_progress=lambda msg: typer.echo(msg, err=True),
                        reporter=RichReporter(), overwrite=replace,
                        on_failure=lambda line: typer.echo(f"error: {line}", err=True),
                        on_task=table if tables else None, keep_going=keep_going)

    if target_ci is None:  # each task's table as soon as it is done (the first look is quick)
        results = one(cfg, overwrite, tables=True)
        print_footer(results, console)
    else:
        from harness.run.rounds import run_rounds

        results, _ = run_rounds(
            cfg, target_ci, first_round, one, overwrite,
            lambda r: typer.echo(f"round at {r.limit} per bucket: {r.samples} samples, widest "
                                 f"+-{100 * r.reach:.1f} pts ({r.widest})", err=True))
        print_results(results, console)
    if results.cache:
        regrown = results.cache.regrown
        typer.echo(f"response cache: {results.cache.hits} answered from {results.cache.path}"
                   + (f" ({regrown} of them under another budget they ended before)"
                      if regrown else "")
                   + f", {results.cache.misses} sent to the model", err=True)
    if results.replay is not None:
        typer.echo(f"--replay: {results.replay.answered} answered from "
                   f"{len(results.replay.sources)} earlier run(s)"
                   + (f", {results.replay.grown} of them ended before a smaller budget"
                      if results.replay.grown else ""), err=True)
    typer.echo(f"wrote {output_dir / 'results.json'} and {output_dir / 'samples'}/")
    if results.failed:
        n = len(results.failed) + len(results.tasks)
        rest = "the others are complete" if results.tasks else "no task completed"
        typer.echo(f"error: {len(results.failed)} of {n} tasks failed (listed under 'failed' in "
                   f"results.json); {rest}", err=True)
        raise typer.Exit(1)
