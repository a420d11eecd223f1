"""``harness leaderboard build``: merge runs, then write the tables, the JSON, the site and
the PNG plots into one folder.

The build writes into a fresh folder next to ``--out`` and swaps it in when every file is
written, holding a lock for the whole build (see :mod:`harness.leaderboard.paths`): a failed
build leaves the previous leaderboard as it was, readers never see half of one, and a second
build into the same folder fails at once naming the first. Each copied per-sample file is
checked against the ``samples_sha256`` its results.json records, on the (uncompressed) bytes
copied. The board carries its inputs (``runs/``) and records its build options
(``leaderboard.json`` ``build``), so :func:`harness.leaderboard.check.rebuild_diff` can rebuild it
byte for byte.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from harness.errors import HarnessError
from harness.leaderboard import plots, site, tables
from harness.leaderboard.board_file import BuildOptions, Conflict, Leaderboard
from harness.leaderboard.compare_pages import load_comparisons
from harness.leaderboard.inputs import Copy, open_samples
from harness.leaderboard.paths import (
    BuildLock,
    SafeWriter,
    check_out,
    new_build_folder,
    remove_stale,
    swap_in,
)
from harness.leaderboard.plan import MIN_PER_BUCKET, TARGET
from harness.leaderboard.precision import title_conflict
from harness.leaderboard.site import Viewer


@dataclass
class BuildReport:
    """What a build wrote and what it found."""

    board: Leaderboard  # the merged leaderboard
    files: list[Path]  # every file written, under --out
    conflicts: list[Conflict]  # duplicates that disagreed
    skipped: list[str] = field(default_factory=list)  # tasks left out (--skip-invalid), why


class _Hashing:
    """Copies a file's bytes into a writable stream, hashing what it copies."""

    def __init__(self, dest: IO[bytes] | gzip.GzipFile) -> None:
        self.dest = dest  # where the bytes go
        self.hash = hashlib.sha256()  # of the bytes copied so far

    def write(self, data: bytes) -> int:
        self.hash.update(data)
        return self.dest.write(data)


def _copy_files(copies: Sequence[Copy], w: SafeWriter) -> list[Path]:
    """Copy each run's results.json verbatim and its samples (decompressed from a ``.gz`` copy,
    compressed again for a ``.gz`` destination), checking samples against their sha256."""
    files = []
    for c in copies:
        with open_samples(c.src) as f, w.open(c.rel) as dest:
            if c.rel.endswith(".gz"):
                # mtime=0, no file name: the same samples give the same bytes
                with gzip.GzipFile(filename="", fileobj=dest, mode="wb", compresslevel=9,
                                   mtime=0) as g:
                    sink = _Hashing(g)
                    shutil.copyfileobj(f, sink)
            else:
                sink = _Hashing(dest)
                shutil.copyfileobj(f, sink)
        if c.sha256 is not None and sink.hash.hexdigest() != c.sha256:
            raise HarnessError(f"{c.results}: samples_sha256 does not match {c.src} (the "
                               "samples file changed after the run)")
        files.append(w.root / c.rel)
    return files


def _write_all(board: Leaderboard, copies: Sequence[Copy], viewer: Viewer, root: Path,
               png: bool) -> list[Path]:
    w = SafeWriter(root)
    files = [w.write_text("leaderboard.json", json.dumps(
        board.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n")]
    files += tables.write_tables(board, root)
    files += _copy_files(copies, w)
    if png:
        files += plots.write_plots(board, root)
    files += site.write_site(board, root, viewer, png=png)
    return files


def build(paths: Sequence[Path], out: Path, title: str = "Leaderboard", samples: str = "copy",
          gzip_samples: bool = False, png: bool = True, skip_invalid: bool = False,
          target: float = TARGET, min_per_bucket: int = MIN_PER_BUCKET,
          compare: Sequence[Path] = ()) -> BuildReport:
    """Build the leaderboard folder *out* from results.json files (or run folders); *out* is
    replaced as a whole once the build succeeds. ``skip_invalid``: leave out tasks whose names
    or samples files are unsafe, or whose samples fail their sha256, instead of failing.
    ``target``/``min_per_bucket``: the precision the board states and checks every row against;
    ``compare``: JSON files of
    ``harness compare --json`` to publish as pages (copied into the board)."""
    from harness.leaderboard.aggregate import board_from_runs

    where = Path(os.path.abspath(out))
    if not where.name:
        raise HarnessError(f"--out {out}: give a folder with a name")
    if not 0 < target < 0.5:
        raise HarnessError(f"--target: expected a half-width between 0 and 0.5, got {target}")
    check_out(where)
    merged = board_from_runs(paths, title=title, samples=samples, gzip_samples=gzip_samples,
                     skip_invalid=skip_invalid, target=target,
                     min_per_bucket=min_per_bucket)
    if (why := title_conflict(title, merged.board.precision)) is not None:
        raise HarnessError(f"--title {title!r}: {why}")
    collected, samples_shown = merged.collected, merged.viewer
    comparisons, compare_copies = load_comparisons(compare)
    board = merged.board.model_copy(update={"build": BuildOptions(
        title=title, samples=samples, gzip_samples=gzip_samples, png=png,
        skip_invalid=skip_invalid, target=target, min_per_bucket=min_per_bucket,
        compare=[c.rel for c in compare_copies])})
    viewer = Viewer(samples_shown, comparisons)
    with BuildLock(where):
        check_out(where)  # again, now that no other build can change it
        remove_stale(where)
        tmp = new_build_folder(where)
        try:
            files = _write_all(board, [*collected.copies, *compare_copies], viewer, tmp, png)
            swap_in(tmp, where)
        except OSError as e:
            raise HarnessError(f"--out {out}: cannot write the leaderboard: "
                               f"{e.strerror or e}") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    files = [out / f.relative_to(tmp) for f in files]
    return BuildReport(board, files, list(board.conflicts), collected.skipped)
