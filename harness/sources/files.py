"""Records from local jsonl / csv / tsv files."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.tasks.spec import FilesSource


def resolve_path(raw: str, base_dir: Path) -> Path:
    """Expand ``~`` and ``$VARS``; relative paths are taken from the task file's folder."""
    p = Path(os.path.expandvars(os.path.expanduser(raw)))
    return p if p.is_absolute() else (base_dir / p)


def read_records(source: FilesSource, base_dir: Path) -> list[dict[str, Any]]:
    """All records of the file, in file order."""
    path = resolve_path(source.path, base_dir)
    fmt: str = source.format
    if fmt == "auto":
        fmt = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "tsv"}.get(
            path.suffix.lower(), ""
        )
        if not fmt:
            raise HarnessError(f"source.path: cannot tell the format of {path}; set source.format")
    if not path.exists():
        raise HarnessError(f"source.path: file not found: {path}")
    with path.open(encoding="utf-8", newline="") as f:
        if fmt == "jsonl":
            out = []
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except json.JSONDecodeError as e:
                    raise HarnessError(f"{path}:{n}: invalid JSON: {e.msg}") from None
                if not isinstance(rec, dict):
                    raise HarnessError(f"{path}:{n}: expected a JSON object per line")
                out.append(rec)
            return out
        return [dict(r) for r in csv.DictReader(f, delimiter="\t" if fmt == "tsv" else ",")]
