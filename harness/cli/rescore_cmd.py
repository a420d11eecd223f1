"""``harness rescore``: recompute finished runs' numbers from their per-sample files."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def rescore_command(
    runs: Annotated[list[Path], typer.Argument(help="Run folders (or their results.json).")],
) -> None:
    """Recompute every bucket table, gap and analysis of finished runs from their samples files
    (checked against results.json) and rewrite results.json at the current schema version:
    brings runs made under older statistics up to date without asking the model again."""
    from harness.run.rescore import rescore

    for run in runs:
        folder = run.parent if run.name == "results.json" else run
        print(f"rescored {rescore(folder)}")
