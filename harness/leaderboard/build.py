"""``harness leaderboard build``: merge runs, then write the tables, the JSON, the site and
the PNG plots into one folder.

The build writes into a fresh folder next to ``--out`` and swaps it in when every file is
written, holding a lock for the whole build (see :mod:`harness.leaderboard.paths`): a failed
build leaves the previous leaderboard as it was, readers never see half of one, and a second
build into the same folder fails at once naming the first. Each copied per-sample file is
checked against the ``samples_sha256`` its results.json records, on the bytes copied.
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
from harness.leaderboard.collect import collect
from harness.leaderboard.inputs import Copy
from harness.leaderboard.paths import (
    BuildLock,
    SafeWriter,
    check_out,
    new_build_folder,
    remove_stale,
    swap_in,
)
from harness.leaderboard.schema import Conflict, Leaderboard


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


def _copy_samples(copies: Sequence[Copy], w: SafeWriter) -> list[Path]:
    files = []
    for c in copies:
        with c.src.open("rb") as f, w.open(c.rel) as dest:
            if c.rel.endswith(".gz"):
                # mtime=0: the same samples give the same bytes
                with gzip.GzipFile(fileobj=dest, mode="wb", compresslevel=9, mtime=0) as g:
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


def _write_all(board: Leaderboard, copies: Sequence[Copy], root: Path,
               png: bool) -> list[Path]:
    from harness.leaderboard.site import write_site
    from harness.leaderboard.tables import write_tables

    w = SafeWriter(root)
    files = [w.write_text("leaderboard.json", json.dumps(
        board.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n")]
    files += write_tables(board, root)
    files += _copy_samples(copies, w)
    if png:
        from harness.leaderboard.plots import write_plots

        files += write_plots(board, root)
    files += write_site(board, root, png=png)
    return files


def build(paths: Sequence[Path], out: Path, title: str = "Leaderboard", samples: str = "copy",
          gzip_samples: bool = False, png: bool = True,
          skip_invalid: bool = False) -> BuildReport:
    """Build the leaderboard folder *out* from results.json files (or run folders); *out* is
    replaced as a whole once the build succeeds. ``skip_invalid``: leave out tasks whose names
    or samples files are unsafe, or whose samples fail their sha256, instead of failing."""
    where = Path(os.path.abspath(out))
    if not where.name:
        raise HarnessError(f"--out {out}: give a folder with a name")
    check_out(where)
    collected = collect(paths, title=title, samples=samples, gzip_samples=gzip_samples,
                        skip_invalid=skip_invalid)
    with BuildLock(where):
        check_out(where)  # again, now that no other build can change it
        remove_stale(where)
        tmp = new_build_folder(where)
        try:
            files = _write_all(collected.board, collected.copies, tmp, png)
            swap_in(tmp, where)
        except OSError as e:
            raise HarnessError(f"--out {out}: cannot write the leaderboard: "
                               f"{e.strerror or e}") from None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    files = [out / f.relative_to(tmp) for f in files]
    return BuildReport(collected.board, files, list(collected.board.conflicts),
                       collected.skipped)
