"""Options and helpers the ``harness tasks`` commands share."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from harness.tasks.index import TaskIndex

IncludeOpt = Annotated[list[Path] | None,  # noqa: UP007
                      typer.Option("--include-path", help="Extra task folder (repeatable).")]

RestrictOpt = Annotated[bool, typer.Option(
    "--restrict-paths", help="Task files may read local files (include:, source.path) only "
    "inside their own folder and $GENHARNESS_DATA.")]


def restrict(on: bool) -> None:
    """``--restrict-paths``: task files read local files only inside their folder and data."""
    if on:
        from harness.sources.paths import restrict_paths

        restrict_paths()


def task_index(include: list[Path] | None) -> TaskIndex:
    """Built-in tasks, the ``--include-path`` folders and (lazily) installed plugins."""
    from harness.tasks.index import TaskIndex

    return TaskIndex.build(include or [])
