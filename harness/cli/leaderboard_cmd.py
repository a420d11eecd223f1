"""``harness leaderboard build|serve``: merge runs into a leaderboard folder; preview its site."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from harness.errors import HarnessError

app = typer.Typer(no_args_is_help=True, help="Leaderboards: merged tables and a static site.")


@app.command("build")
def build_command(
    results: Annotated[list[Path], typer.Argument(help="results.json files or run folders.")],
    out: Annotated[Path, typer.Option(help="Leaderboard folder to write.")],
    title: Annotated[str, typer.Option(help="Title of the leaderboard.")] = "Leaderboard",
    samples: Annotated[str, typer.Option(help="copy: copy per-sample files (linked from the "
                                              "site); none: leave them out.")] = "copy",
    gzip_samples: Annotated[bool, typer.Option(help="Store copied per-sample files "
                                                    "gzip-compressed (.jsonl.gz).")] = False,
    png: Annotated[bool, typer.Option(help="Also write PNG plots (matplotlib).")] = True,
    skip_invalid: Annotated[bool, typer.Option(
        help="Leave out (with a warning line each) tasks whose name or samples file is unsafe "
             "or whose samples fail their sha256, instead of failing the build.")] = False,
    target: Annotated[float, typer.Option(help="Stated precision: pooled ID and OOD accuracy "
                                               "within +- this (95%).")] = 0.10,
    min_per_bucket: Annotated[int, typer.Option(help="Stated precision: items per bucket.")
                              ] = 30,
    compare: Annotated[list[Path] | None, typer.Option(
        help="A harness compare --json file to publish as a page (repeatable).")] = None,  # noqa: UP007
) -> None:
    """Merge runs (latest per model x task x configuration) and write leaderboard.{csv,json,md},
    buckets.csv, the static site (index.html) and plots/. The folder is replaced as a whole
    when the build succeeds; nothing is written outside it."""
    try:
        from harness.leaderboard.build import build
    except ImportError as err:
        raise HarnessError(f"leaderboard build needs pandas and matplotlib ({err}); install "
                           "them with: pip install 'genharness[leaderboard]'") from None
    report = build(results, out, title=title, samples=samples, gzip_samples=gzip_samples,
                   png=png, skip_invalid=skip_invalid, target=target,
                   min_per_bucket=min_per_bucket, compare=compare or [])
    for why in report.skipped:
        typer.echo(f"warning: skipped: {why}", err=True)
    for c in report.conflicts:
        typer.echo(f"conflict: {c.entry} {c.task}: kept {c.kept}, dropped {c.dropped}: "
                   f"{c.reason}", err=True)
    b = report.board
    for e in b.entries:
        o = e.overall
        overall = "-" if o.value is None else f"{100 * o.value:.1f}"
        if o.ci_low is not None and o.ci_high is not None:
            overall += f" [{100 * o.ci_low:.1f}, {100 * o.ci_high:.1f}]"
        rank = str(e.rank) if e.rank_low == e.rank_high else f"{e.rank_low}-{e.rank_high}"
        typer.echo(f"{rank:>5}. {e.label}  overall {overall}%  ({e.n_tasks} tasks)")
    if b.stale_tasks:
        typer.echo(f"stale: {len(b.stale_tasks)} tasks ran with a spec, on items or with a "
                   f"horizon search that differ from this checkout's: "
                   f"{', '.join(b.stale_tasks)}")
    typer.echo(f"wrote {out}/ ({len(b.entries)} entries, {len(b.tasks)} tasks, "
               f"{len(b.sources)} runs, {len(report.conflicts)} conflicts"
               + (f", {len(report.skipped)} tasks skipped" if report.skipped else "") + "); "
               f"open {out / 'index.html'}")


@app.command("serve")
def serve_command(
    directory: Annotated[Path, typer.Argument(help="Leaderboard folder (holds index.html).")],
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port (0: any free one).")] = 8000,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
) -> None:
    """Preview a leaderboard site at http://HOST:PORT/ (Ctrl-C stops)."""
    import functools
    import http.server

    if not (directory / "index.html").is_file():
        raise HarnessError(f"{directory}: no index.html (build it with harness leaderboard build)")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(directory))
    try:
        server = http.server.ThreadingHTTPServer((host, port), handler)
    except OSError as e:
        raise HarnessError(f"--port: cannot listen on {host}:{port}: {e}") from None
    typer.echo(f"serving {directory} at http://{host}:{server.server_address[1]}/ (Ctrl-C stops)")
    try:
        server.serve_forever()
    finally:
        server.server_close()


@app.command("plan")
def plan_command(
    tasks: Annotated[str, typer.Option(help="Tasks or suites, comma-separated.")] = (
        "lengthgen,compgen,easy2hard,instructdiv"),
    target: Annotated[float, typer.Option(help="Pooled ID and OOD accuracy within +- this.")
                      ] = 0.10,
    min_per_bucket: Annotated[int, typer.Option(help="Items per bucket at least.")] = 30,
    seed: Annotated[int, typer.Option(help="Run seed (decides which items).")] = 0,
    groups_only: Annotated[bool, typer.Option(
        "--groups", help="Print only 'LIMIT TASK,TASK,...' lines (LIMIT 'all': every item), "
                         "one harness eval each.")] = False,
    models: Annotated[str, typer.Option(help="Models to estimate, comma-separated (default: "
                                             "every model in the cost table).")] = "",
    unmeasured: Annotated[str, typer.Option(
        help="With --groups: only the tasks the cost table has no measurement of for this "
             "model (what scripts/build_leaderboard.sh --retime runs).")] = "",
    costs: Annotated[Path | None, typer.Option(
        help="Cost table (default: the measured one shipped with the harness; make your own "
             "with 'harness leaderboard costs').")] = None,
) -> None:
    """Items per bucket each task needs for the stated precision, and its measured cost."""
    from harness.leaderboard.costs import core_hours, current, estimate, read_table, scaled_mark
    from harness.leaderboard.plan import groups, per_bucket, plan_tasks
    from harness.run.progress import duration

    if not 0 < target < 0.5 or min_per_bucket < 1:
        raise HarnessError("--target must be in (0, 0.5) and --min-per-bucket at least 1")
    if unmeasured and not groups_only:
        raise HarnessError("--unmeasured: only with --groups")
    plans = plan_tasks([tasks], seed, target, min_per_bucket)
    specs = {p.task: p.spec_sha256 for p in plans}
    table = read_table(costs)
    if groups_only:
        have = current(table, unmeasured, specs) if unmeasured else {}
        for limit, names in groups([p for p in plans if p.task not in have]):
            typer.echo(f"{limit if limit is not None else 'all'} {','.join(names)}")
        return
    names = [m for m in models.split(",") if m] or list(table.models)
    planned = [(p.task, p.prompts) for p in plans]
    est = {m: estimate(table, m, planned, specs) for m in names}
    typer.echo(f"target: pooled ID and OOD within +-{100 * target:g} pts (95%), >= "
               f"{min_per_bucket} per bucket: {per_bucket(1, 1, target, min_per_bucket)} items "
               "per role at least")
    if names:
        typer.echo("CPU time per model (measured at plan size, '<=' scaled from a smaller run: "
                   "an upper bound; see --costs): "
                   + ", ".join(f"[{i + 1}] {m}" for i, m in enumerate(names)))
    for p in plans:
        lim = "all" if p.limit is None else str(p.limit)
        cost = "".join(
            f"  [{i + 1}] " + (scaled_mark(table.models[m].get(p.task), p.limit)
                               + duration(est[m][0][p.task]) if p.task in est[m][0]
                               else "not measured")
            for i, m in enumerate(names))
        typer.echo(f"{p.task:40} limit {lim:>4}  n_ID {p.n_id:>4}  n_OOD {p.n_ood:>4}  "
                   f"+-{100 * max(p.half_id, p.half_ood):.1f} pts  {p.prompts:>5} prompts{cost}"
                   + (f"  SHORT: {p.short}" if p.short else ""))
    typer.echo(f"{sum(p.prompts for p in plans)} prompts per model")
    for m in names:
        secs, missing = est[m]
        total = sum(secs.values())
        more = (f" at least ({len(missing)} of {len(plans)} tasks not measured)" if missing
                else "")
        typer.echo(f"{m}: {core_hours(total)}{more}, one process on one core")


@app.command("costs")
def costs_command(
    runs: Annotated[list[Path], typer.Argument(help="Finished run folders (or results.json) "
                                                    "to take CPU times from.")],
    out: Annotated[Path | None, typer.Option(
        help="Cost table to add them to (created if absent); default: print the table.")] = None,
) -> None:
    """Add the measured CPU time per task of finished runs to a cost table (for plan)."""
    from harness.leaderboard.costs import CostTable, add_runs, read_table, write_table

    base = read_table(out) if out is not None and out.exists() else CostTable()
    table, notes = add_runs(base, runs)
    for n in notes:
        typer.echo(f"skipped {n}", err=True)
    if out is None:
        typer.echo(table.model_dump_json(indent=1))
    else:
        write_table(table, out)
        count = sum(len(t) for t in table.models.values())
        typer.echo(f"{out}: {count} task costs over {len(table.models)} models")


@app.command("check")
def check_command(
    board: Annotated[Path, typer.Argument(help="A built leaderboard folder.")],
    rebuild: Annotated[bool, typer.Option(help="Also rebuild it from its runs/ and diff.")
                       ] = True,
) -> None:
    """Is a board current? Its spec hashes against this checkout's tasks, its items against
    the ones this checkout makes, and (--rebuild) a rebuild from the runs it carries, byte for
    byte. Exit 1 when not."""
    import tempfile

    from harness.leaderboard.check import board_include_paths, board_specs, rebuild_diff
    from harness.leaderboard.stale import board_runs, drifted_tasks, searched_otherwise, stale_tasks

    if not (board / "leaderboard.json").is_file():
        raise HarnessError(f"{board}: no leaderboard.json")
    bad = False
    stale = stale_tasks(board_specs(board), board_include_paths(board))
    if stale:
        bad = True
        typer.echo(f"{board}: stale: rerun {', '.join(stale)}")
    drifted = drifted_tasks(board, board_include_paths(board))
    if drifted:
        bad = True
        typer.echo(f"{board}: this checkout makes other items for {', '.join(drifted)}: rerun "
                   "them")
    searched = searched_otherwise(board_runs(board))
    if searched:
        bad = True
        typer.echo(f"{board}: a horizon search of {', '.join(searched)} ended its range where "
                   "this checkout's goes on (the answer budget): rerun them")
    if rebuild:
        with tempfile.TemporaryDirectory() as tmp:
            diff = rebuild_diff(board, Path(tmp) / "board")
        if diff:
            bad = True
            typer.echo(f"{board}: a rebuild from its runs/ differs in {len(diff)} files: "
                       f"{', '.join(diff[:5])}")
    if bad:
        raise typer.Exit(1)
    typer.echo(f"{board}: current (spec hashes, items and horizon searches match; rebuild "
               "identical)")


@app.command("rescore")
def rescore_command(
    board: Annotated[Path, typer.Argument(help="A built leaderboard folder.")],
    title: Annotated[str | None, typer.Option(  # noqa: UP007
        help="A new title (default: the one the board was built with).")] = None,
    run: Annotated[list[Path] | None, typer.Option(  # noqa: UP007
        help="A newer run (folder or results.json) that replaces the board's run of the same "
             "model and tasks, e.g. a task run again (repeatable).")] = None,
) -> None:
    """Recompute a board's numbers from the samples its runs carry (after a change of the
    statistics; no model is asked): each run is rescored and the board rebuilt in place with
    the options it records."""
    import tempfile

    from harness.leaderboard.check import rescore_board

    if not (board / "leaderboard.json").is_file():
        raise HarnessError(f"{board}: no leaderboard.json")
    with tempfile.TemporaryDirectory() as tmp:
        n = rescore_board(board, Path(tmp), title, run or [])
    typer.echo(f"{board}: {n} runs rescored, board rebuilt")


@app.command("summary")
def summary_command(
    board: Annotated[Path, typer.Argument(help="A built leaderboard folder.")],
    into: Annotated[  # noqa: UP007
        list[Path] | None,
        typer.Option(help="A Markdown file whose summary:BOARD begin/end marker block is "
                          "rewritten (repeatable); default: print."),
    ] = None,
) -> None:
    """The board in sentences and tables, generated from its leaderboard.json: headline table,
    precision, where gaps fall (at the ID edge or inside it), difficulty + shift per task."""
    from harness.leaderboard.inputs import load_leaderboard
    from harness.leaderboard.summary import summary_md, write_into

    text = summary_md(load_leaderboard(board / "leaderboard.json"))
    if not into:
        typer.echo(text, nl=False)
        return
    for path in into:
        write_into(path, board.name, text)
        typer.echo(f"{path}: summary of {board.name} written")
