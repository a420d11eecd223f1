"""Records from local jsonl / csv / tsv files."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path
from typing import Any

from harness.cache_paths import data_dir
from harness.errors import HarnessError
from harness.tasks.spec import FilesSource


def resolve_path(raw: str, base_dir: Path) -> Path:
    """Expand ``~`` and ``$VARS``; relative paths are taken from the task file's folder."""
    p = Path(os.path.expandvars(os.path.expanduser(raw)))
    return p if p.is_absolute() else (base_dir / p)


def missing_data_hint(raw: str | None) -> str:
    """The hint added to a missing-data error: ``GENHARNESS_DATA`` and the local mirror."""
    env = os.environ.get("GENHARNESS_DATA")
    where = (f"GENHARNESS_DATA is {env!r}; the file is not there" if env and raw
             and "GENHARNESS_DATA" in raw else "set GENHARNESS_DATA to a local mirror folder")
    return (f" ({where}; with the data mirror the task runs offline, see README "
            "\"Suites and data\")")


def fetch_file(path: Path, url: str | None, sha256: str | None = None) -> Path:
    """``path`` when it exists; else ``url`` downloaded once into ``cache_paths.data_dir()``
    (keyed by the URL's hash, checked against ``sha256`` when given) and the cached copy's path."""
    import hashlib
    import urllib.error
    import urllib.request

    if path.exists() or not url:
        return path
    name = url.rstrip("/").rsplit("/", 1)[-1] or "data"
    dest = data_dir() / hashlib.sha256(url.encode()).hexdigest()[:16] / name
    if not dest.exists():
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_suffix(dest.suffix + ".part")
        try:
            with urllib.request.urlopen(url, timeout=60) as r, tmp.open("wb") as f:
                f.write(r.read())
        except (urllib.error.URLError, OSError, ValueError) as e:
            raise HarnessError(f"source.url: cannot download {url}: {e}") from None
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
        if sha256 and digest != sha256.lower():
            tmp.unlink()
            raise HarnessError(f"source.sha256: {url} has sha256 {digest}, expected {sha256}")
        tmp.replace(dest)
    return dest


def read_records(source: FilesSource, base_dir: Path) -> list[dict[str, Any]]:
    """All records of the file, in file order (downloaded from ``url`` when ``path`` is absent)."""
    path = fetch_file(resolve_path(source.path, base_dir), source.url, source.sha256)
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
