"""``harness leaderboard build``: merge runs, then write the tables, the JSON, the site and
the PNG plots into one folder."""

from __future__ import annotations

import gzip
import json
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.leaderboard.collect import collect
from harness.leaderboard.schema import Conflict, Leaderboard


@dataclass
class BuildReport:
    """What a build wrote and what it found."""

    board: Leaderboard
    files: list[Path]
    conflicts: list[Conflict]


def _copy_samples(copies: Sequence[tuple[Path, str]], out: Path) -> list[Path]:
    shutil.rmtree(out / "per-sample", ignore_errors=True)
    files = []
    for src, rel in copies:
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".gz"):
            # mtime=0: the same samples give the same bytes
            with src.open("rb") as f, gzip.GzipFile(dest, "wb", compresslevel=9, mtime=0) as g:
                shutil.copyfileobj(f, g)
        else:
            shutil.copyfile(src, dest)
        files.append(dest)
    return files


def build(paths: Sequence[Path], out: Path, title: str = "Leaderboard", samples: str = "copy",
          gzip_samples: bool = False, png: bool = True) -> BuildReport:
    """Build the leaderboard folder *out* from results.json files (or run folders)."""
    if out.exists() and not out.is_dir():
        raise HarnessError(f"--out: {out} exists and is not a folder")
    collected = collect(paths, title=title, samples=samples, gzip_samples=gzip_samples)
    board = collected.board
    out.mkdir(parents=True, exist_ok=True)
    from harness.leaderboard.site import write_site
    from harness.leaderboard.tables import write_tables

    files = [out / "leaderboard.json"]
    files[0].write_text(json.dumps(board.model_dump(mode="json"), indent=1, ensure_ascii=False)
                        + "\n", encoding="utf-8")
    files += write_tables(board, out)
    files += _copy_samples(collected.copies, out)
    if png:
        from harness.leaderboard.plots import write_plots

        files += write_plots(board, out)
    files += write_site(board, out, png=png)
    return BuildReport(board, files, list(board.conflicts))
