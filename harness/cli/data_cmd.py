"""``harness data``: training data from a task's generator (``export``)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(no_args_is_help=True, help="Training data from the task generators.")


@app.command("export")
def export_command(
    task: str,
    out: Annotated[Path, typer.Option(help="Output JSON-lines file.")],
    n: Annotated[int, typer.Option("--n", min=1, help="Rows to write.")] = 10000,
    role: Annotated[str, typer.Option(help="Bucket role to draw from (ID or OOD).")] = "ID",
    seed: Annotated[int, typer.Option(help="Run seed (the eval seed it must not overlap).")] = 0,
    template: Annotated[str | None, typer.Option(help="Template id (default: first).")] = None,  # noqa: UP007
    overlap_seeds: Annotated[int, typer.Option(
        min=0, help="Report overlap with the eval items of this many other seeds.")] = 3,
    include_path: Annotated[list[Path] | None, typer.Option(  # noqa: UP007
        "--include-path", help="Extra task folder (repeatable).")] = None,
) -> None:
    """Write rows {prompt, target} as `harness eval --num-fewshot 0` shows them, none of them an
    item the same-seed evaluation tests; print how many rows each difficulty value got."""
    from harness.data.export import export_to
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build(include_path or [])
    ref = index.resolve([task])[0]
    rep = export_to(index.spec(ref), ref, out, n, role, seed, template, overlap_seeds)
    for line in rep.lines():
        typer.echo(line)
