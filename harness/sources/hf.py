"""Records from a Hugging Face ``datasets`` dataset, pinned to a revision.

``local_path`` (a directory saved with ``save_to_disk``, or data files) is used instead of the hub
when it exists, so tests and offline users can run the same task file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.sources.files import missing_data_hint, resolve_path
from harness.sources.files import read_records as read_file
from harness.tasks.spec import DatasetSource, FilesSource


def read_records(source: DatasetSource, base_dir: Path) -> list[dict[str, Any]]:
    """All rows of the split, as dicts, in dataset order.

    A ``local_path`` that is a jsonl/csv/tsv file is read directly (no ``datasets`` needed)."""
    if source.local_path:
        local = resolve_path(source.local_path, base_dir)
        if local.is_file():
            return read_file(FilesSource(type="files", path=str(local)), base_dir)
    try:
        import datasets
    except ImportError:
        raise HarnessError(
            "source.type 'dataset' needs the datasets library: pip install 'genharness[datasets]'"
        ) from None
    try:
        if source.local_path and resolve_path(source.local_path, base_dir).exists():
            local = resolve_path(source.local_path, base_dir)
            if (local / "dataset_info.json").exists() or (local / "state.json").exists():
                ds = datasets.load_from_disk(str(local))
            else:
                ds = datasets.load_dataset(str(local), source.config, split=source.split)
        else:
            ds = datasets.load_dataset(
                source.path, source.config, split=source.split, revision=source.revision
            )
        if isinstance(ds, datasets.DatasetDict):
            ds = ds[source.split]
    except (OSError, ValueError, ConnectionError, FileNotFoundError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        hint = ""
        if source.local_path:
            local = resolve_path(source.local_path, base_dir)
            hint = f"; local mirror source.local_path {str(local)!r} not found" + \
                missing_data_hint(source.local_path)
        raise HarnessError(
            f"source: cannot load dataset {source.path!r} (split {source.split!r}): {msg}{hint}"
        ) from None
    return [dict(r) for r in ds]
