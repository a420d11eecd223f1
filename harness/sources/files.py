"""Records from local jsonl / csv / tsv files, and the bounded reads of every data file a task
names: a regular file (never a device such as ``/dev/zero``, a FIFO or a folder) of at most
``MAX_SOURCE_BYTES``, UTF-8; a download is cut off at the same size."""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

from harness.bounds import check_regular, read_utf8
from harness.cache_paths import data_dir
from harness.errors import HarnessError
from harness.filelock import os_reason
from harness.spec.sources import FilesSource

MAX_SOURCE_BYTES = 1 << 30  # a data file (or a download) larger than this is refused: 1 GiB


def shown(path: Path | str) -> str:
    """``path`` for a one-line message: a very long one is cut in the middle."""
    text = str(path)
    if len(text) <= 200:
        return text
    return f"{text[:120]}…{text[-40:]} ({len(text):,} characters)"


def exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the system cannot even look up (too long, a NUL byte)
    does not."""
    try:
        return path.exists()
    except (OSError, ValueError):
        return False


def read_data(path: Path, key: str, read: bool = True) -> str:
    """The text of the data file ``path``: a regular file of at most ``MAX_SOURCE_BYTES``, UTF-8;
    anything else is one line naming ``key`` (``read=False``: the same checks of the file's type
    and size, nothing read, "" returned)."""
    try:
        if not read:
            check_regular(path, MAX_SOURCE_BYTES)
            return ""
        return read_utf8(path, MAX_SOURCE_BYTES)
    except FileNotFoundError:
        raise HarnessError(f"{key}: file not found: {shown(path)}") from None
    except ValueError as e:  # a device, FIFO or folder; too large; not UTF-8; a NUL in the name
        raise HarnessError(f"{key}: {shown(path)} {e}" if str(e).startswith("is ") else
                           f"{key}: cannot read {shown(path)}: {e}") from None
    except OSError as e:
        raise HarnessError(f"{key}: cannot read {shown(path)}: {os_reason(e)}") from None


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

    if exists(path) or not url:
        return path
    name = url.rstrip("/").rsplit("/", 1)[-1] or "data"
    dest = data_dir() / hashlib.sha256(url.encode()).hexdigest()[:16] / name
    if not dest.exists():
        tmp = dest.with_suffix(dest.suffix + ".part")
        try:
            dest.parent.mkdir(parents=True, exist_ok=True)
            with urllib.request.urlopen(url, timeout=60) as r, tmp.open("wb") as f:
                data = r.read(MAX_SOURCE_BYTES + 1)
                if len(data) > MAX_SOURCE_BYTES:
                    raise ValueError(f"larger than {MAX_SOURCE_BYTES:,} bytes")
                f.write(data)
        except (urllib.error.URLError, OSError, ValueError) as e:
            tmp.unlink(missing_ok=True)
            raise HarnessError(f"source.url: cannot download {url}: {e}") from None
        digest = hashlib.sha256(tmp.read_bytes()).hexdigest()
        if sha256 and digest != sha256.lower():
            tmp.unlink()
            raise HarnessError(f"source.sha256: {url} has sha256 {digest}, expected {sha256}")
        tmp.replace(dest)
    return dest


def check_records(source: FilesSource, base_dir: Path) -> None:
    """What ``read_records`` checks before it reads: the format is known and a local file is a
    regular file within ``MAX_SOURCE_BYTES`` (a file still to download is not fetched)."""
    path = resolve_path(source.path, base_dir)
    if exists(path) or not source.url:
        _format(source, path)
        read_data(path, "source.path", read=False)


def _format(source: FilesSource, path: Path) -> str:
    fmt: str = source.format
    if fmt == "auto":
        fmt = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".tsv": "tsv"}.get(
            path.suffix.lower(), ""
        )
        if not fmt:
            raise HarnessError(f"source.path: cannot tell the format of {path}; set source.format")
    return fmt


def read_records(source: FilesSource, base_dir: Path) -> list[dict[str, Any]]:
    """All records of the file, in file order (downloaded from ``url`` when ``path`` is absent)."""
    return [rec for _, rec in read_numbered(source, base_dir)[1]]


def read_numbered(source: FilesSource, base_dir: Path
                  ) -> tuple[Path, list[tuple[int, dict[str, Any]]]]:
    """The file read (downloaded from ``url`` when ``path`` is absent) and its records in file
    order, each with the line it starts on (a csv/tsv row: its first line; the header is
    line 1)."""
    path = fetch_file(resolve_path(source.path, base_dir), source.url, source.sha256)
    fmt = _format(source, path)
    text = read_data(path, "source.path")
    with io.StringIO(text, newline="") as f:  # lines split as in a file opened with newline=""
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
                out.append((n, rec))
            return path, out
        reader = csv.DictReader(f, delimiter="\t" if fmt == "tsv" else ",")
        rows, start = [], 2
        for r in reader:
            rows.append((start, dict(r)))
            start = reader.line_num + 1
        return path, rows
