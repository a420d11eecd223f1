"""Records from a Hugging Face ``datasets`` dataset, pinned to a revision.

``local_path`` (a directory saved with ``save_to_disk``, or data files) is used instead of the hub
when it exists, so tests and offline users can run the same task file. When the hub cannot be
used (``harness.hub_access``), the dataset is looked up in offline mode: a cached copy loads, and
anything else fails at once instead of after the hub client's retries.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.hub_access import hub_unusable
from harness.sources.files import exists, missing_data_hint, resolve_path, shown
from harness.sources.files import read_records as read_file
from harness.spec.sources import DatasetSource, FilesSource


def read_records(source: DatasetSource, base_dir: Path) -> list[dict[str, Any]]:
    """All rows of the split, as dicts, in dataset order.

    A ``local_path`` that is a jsonl/csv/tsv file is read directly (no ``datasets`` needed)."""
    local = resolve_path(source.local_path, base_dir) if source.local_path else None
    there = local is not None and exists(local)
    if local is not None and there and not local.is_dir():  # a file (a device: refused there)
        return read_file(FilesSource(type="files", path=str(local)), base_dir)
    no_hub = None if there else hub_unusable()
    if no_hub is not None:
        _offline()
    try:
        import datasets
    except ImportError:
        raise HarnessError(
            "source.type 'dataset' needs the datasets library: pip install 'genharness[datasets]'"
        ) from None
    try:
        if local is not None and there:
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
        if no_hub is not None:
            msg = f"not in the Hugging Face cache, and the hub cannot be used: {no_hub}"
        hint = ""
        if source.local_path:
            hint = f"; local mirror source.local_path {shown(str(local))!r} not found" + \
                missing_data_hint(source.local_path)
        raise HarnessError(
            f"source: cannot load dataset {source.path!r} (split {source.split!r}): {msg}{hint}"
        ) from None
    return [dict(r) for r in ds]


def _offline() -> None:
    """Offline mode for the Hugging Face libraries, from now on in this process (the hub cannot
    be reached anyway): the variables, and the constants they read when already imported."""
    for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    for module in ("huggingface_hub.constants", "datasets.config"):
        loaded = sys.modules.get(module)
        if loaded is not None:
            for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
                if hasattr(loaded, var):
                    setattr(loaded, var, True)
