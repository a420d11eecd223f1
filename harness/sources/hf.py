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

# data files a local mirror folder may hold at its top level, and the reader of each
DATA_SUFFIXES = {".jsonl": "json", ".json": "json", ".csv": "csv", ".tsv": "csv",
                 ".parquet": "parquet", ".arrow": "arrow"}
SAVED_MARKERS = ("dataset_info.json", "state.json", "dataset_dict.json")  # save_to_disk's
MAX_ENTRIES = 10_000  # a mirror folder listing more entries than this is refused unread


def local_files(local: Path, split: str) -> list[Path] | None:
    """What a ``local_path`` folder holds, looked at its top level only (never a walk): None
    for a dataset saved with ``save_to_disk``, else its data files of ``split`` (the files
    whose name holds the split's name, or all of them). Anything else is one line saying what
    is there (``HarnessError``)."""
    files: list[Path] = []
    folders, others = 0, []
    try:
        with os.scandir(local) as entries:
            for n, entry in enumerate(entries):
                if n >= MAX_ENTRIES:
                    raise HarnessError(
                        f"source.local_path: {shown(str(local))} holds over {MAX_ENTRIES:,} "
                        "entries; point it at the data file, or a folder of data files")
                if entry.name in SAVED_MARKERS:
                    return None
                if entry.is_dir():
                    folders += 1
                elif Path(entry.name).suffix.lower() in DATA_SUFFIXES and entry.is_file():
                    files.append(Path(entry.path))
                else:
                    others.append(entry.name)
    except OSError as e:
        raise HarnessError(f"source.local_path: cannot list {shown(str(local))}: "
                           f"{e.strerror or e}") from None
    if not files:
        seen = f"{folders} folder(s), {len(others)} other file(s)" + (
            f": {', '.join(sorted(others)[:3])}" if others else "")
        raise HarnessError(
            f"source.local_path: {shown(str(local))} is a folder without data files at its top "
            f"level (found {seen}); subfolders are not searched: give a data file, or a folder "
            "of them, or one saved with save_to_disk")
    kinds = {DATA_SUFFIXES[f.suffix.lower()] for f in files}
    if len(kinds) > 1:
        raise HarnessError(f"source.local_path: {shown(str(local))} mixes data files of "
                           f"different formats ({', '.join(sorted(kinds))}); keep one")
    of_split = [f for f in files if split in f.stem]
    return sorted(of_split or files)


def read_records(source: DatasetSource, base_dir: Path) -> list[dict[str, Any]]:
    """All rows of the split, as dicts, in dataset order.

    A ``local_path`` that is a jsonl/csv/tsv file, or a folder of them, is read directly (no
    ``datasets`` needed); a folder is looked at its top level only (``local_files``)."""
    local = resolve_path(source.local_path, base_dir) if source.local_path else None
    there = local is not None and exists(local)
    if local is not None and there and not local.is_dir():  # a file (a device: refused there)
        return read_file(FilesSource(type="files", path=str(local)), base_dir)
    files = local_files(local, source.split) if local is not None and there else None
    if files is not None and files[0].suffix.lower() in (".jsonl", ".json", ".csv", ".tsv"):
        return [rec for f in files
                for rec in read_file(FilesSource(type="files", path=str(f)), base_dir)]
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
            if files is None:
                ds = datasets.load_from_disk(str(local))
            else:  # the files found at the top level, named: the library walks nothing
                ds = datasets.load_dataset(DATA_SUFFIXES[files[0].suffix.lower()],
                                           data_files={source.split: [str(f) for f in files]},
                                           split=source.split)
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
        if source.local_path and not there:
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
