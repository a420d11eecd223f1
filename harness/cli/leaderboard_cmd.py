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
                   png=png, skip_invalid=skip_invalid)
    for why in report.skipped:
        typer.echo(f"warning: skipped: {why}", err=True)
    for c in report.conflicts:
        typer.echo(f"conflict: {c.entry} {c.task}: kept {c.kept}, dropped {c.dropped}: "
                   f"{c.reason}", err=True)
    b = report.board
    for e in b.entries:
        overall = "-" if e.overall is None else f"{100 * e.overall:.1f}"
        typer.echo(f"{e.rank:>3}. {e.label}  overall {overall}%  ({e.n_tasks} tasks)")
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
