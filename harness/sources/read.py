"""One entry to the record sources: a task's ``source`` (files or a dataset) → its records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.sources.files import check_records, exists, read_records, resolve_path
from harness.sources.hf import local_files
from harness.sources.hf import read_records as read_dataset
from harness.sources.paths import check_read
from harness.spec.sources import DatasetSource, FilesSource


def read_source(source: FilesSource | DatasetSource, base_dir: Path) -> list[dict[str, Any]]:
    """All records of a file or dataset source, in source order (``--restrict-paths``: a local
    path outside the task folder and the data root is refused)."""
    _check_paths(source, base_dir)
    if isinstance(source, FilesSource):
        return read_records(source, base_dir)
    return read_dataset(source, base_dir)


def check_source(source: FilesSource | DatasetSource, base_dir: Path) -> None:
    """What ``read_source`` refuses before reading, checked without reading: a path outside
    ``--restrict-paths``, a local data file of unknown format, not a regular file (a device such
    as ``/dev/zero``, a FIFO, a folder) or too large, a dataset's local mirror folder without
    data files at its top level (``HarnessError`` naming the key)."""
    _check_paths(source, base_dir)
    if isinstance(source, FilesSource):
        check_records(source, base_dir)
    elif source.local_path:
        local = resolve_path(source.local_path, base_dir)
        if exists(local) and local.is_dir():
            local_files(local, source.split)


def _check_paths(source: FilesSource | DatasetSource, base_dir: Path) -> None:
    if isinstance(source, FilesSource):
        check_read(resolve_path(source.path, base_dir), base_dir, "source.path", base_dir)
    elif source.local_path:
        check_read(resolve_path(source.local_path, base_dir), base_dir, "source.local_path",
                   base_dir)
