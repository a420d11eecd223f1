"""Record sources: local files and HF datasets (generators live in ``harness.generators``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.tasks.spec import DatasetSource, FilesSource


def read_source(source: FilesSource | DatasetSource, base_dir: Path) -> list[dict[str, Any]]:
    """All records of a file or dataset source, in source order."""
    if isinstance(source, FilesSource):
        from harness.sources.files import read_records

        return read_records(source, base_dir)
    from harness.sources.hf import read_records as read_dataset

    return read_dataset(source, base_dir)
