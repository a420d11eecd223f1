"""Record sources: local files and HF datasets (generators live in ``harness.generators``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.tasks.spec import DatasetSource, FilesSource


def read_source(source: FilesSource | DatasetSource, base_dir: Path) -> list[dict[str, Any]]:
    """All records of a file or dataset source, in source order (``--restrict-paths``: a local
    path outside the task folder and the data root is refused)."""
    from harness.sources.files import resolve_path
    from harness.tasks.paths import check_read

    if isinstance(source, FilesSource):
        check_read(resolve_path(source.path, base_dir), base_dir, "source.path", base_dir)
    elif source.local_path:
        check_read(resolve_path(source.local_path, base_dir), base_dir, "source.local_path",
                   base_dir)
    if isinstance(source, FilesSource):
        from harness.sources.files import read_records

        return read_records(source, base_dir)
    from harness.sources.hf import read_records as read_dataset

    return read_dataset(source, base_dir)
