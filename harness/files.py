"""Writing and hashing files, written once for the whole harness.

``write_atomic`` replaces a file through a fresh temporary file in the same folder (readers see
the old file or the new one, never a mix; a link at the path is replaced, never followed).
``write_blocks`` rewrites the generated sections of a document between their marker comments.
``sha256_stream``/``sha256_file`` hash bytes in 1 MiB chunks (memory stays flat whatever the
size); ``cached_sha256_file`` also remembers a file's hash in the cache folder, keyed by its
resolved path, size and modification time (model weights: hashed once, not at every load).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

from harness.cache_paths import cache_root
from harness.errors import HarnessError

log = logging.getLogger(__name__)
CHUNK = 1 << 20  # bytes read at a time when hashing


def write_atomic(path: Path, data: str | bytes, *, durable: bool = True) -> None:
    """Write ``path`` through a fresh temporary file renamed over it (text is written as UTF-8;
    ``durable``: flushed to disk before the rename). The folder must exist."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(raw)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_blocks(path: Path, blocks: Mapping[str, str], *, begin: str = "start") -> None:
    """Replace the generated sections of a document: for each ``NAME: body`` of ``blocks``,
    what lies between the lines ``<!-- NAME:start -->`` and ``<!-- NAME:end -->`` of ``path``
    becomes ``body`` (``begin`` names the opening word, ``start`` or ``begin``); the markers and
    everything outside them stay. One line (HarnessError) unless each block's markers appear
    once, in order; the file is written once, after every block is in place."""
    text = path.read_text(encoding="utf-8")
    for name, body in blocks.items():
        start, end = f"<!-- {name}:{begin} -->", f"<!-- {name}:end -->"
        found = text.count(start), text.count(end)
        if found != (1, 1):
            raise HarnessError(f"{path}: expected one '{start}' … '{end}' block to fill, found "
                               f"{found[0]} start and {found[1]} end marker(s)")
        head, rest = text.split(start, 1)
        if end not in rest:
            raise HarnessError(f"{path}: '{end}' comes before '{start}'")
        tail = rest.split(end, 1)[1]
        body = body.removesuffix("\n")  # one line break before the end marker, given or not
        text = f"{head}{start}\n{body}\n{end}{tail}"
    path.write_text(text, encoding="utf-8")


def sha256_stream(f: IO[bytes]) -> str:
    """sha256 of every byte left in ``f``, read in chunks."""
    h = hashlib.sha256()
    while block := f.read(CHUNK):
        h.update(block)
    return h.hexdigest()


def sha256_file(path: Path) -> str:
    """sha256 of a file's bytes."""
    with path.open("rb") as f:
        return sha256_stream(f)


def cached_sha256_file(path: Path) -> str:
    """``sha256_file``, remembered in ``<cache>/sha256/`` by (resolved path, size, mtime); an
    unwritable cache only costs the time of hashing again."""
    path = path.resolve()
    st = path.stat()
    key = hashlib.sha256(f"{path}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()[:32]
    entry = cache_root() / "sha256" / key
    with contextlib.suppress(OSError):
        cached = entry.read_text(encoding="utf-8").strip()
        if len(cached) == 64:
            return cached
    value = sha256_file(path)
    try:
        entry.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(entry, value + "\n", durable=False)
    except OSError as e:
        log.debug("could not cache sha256 of %s: %s", path, e)
    return value


def files_sha256(files: Sequence[Path]) -> str:
    """One hash for a set of files (a model's weights): the file's own (cached) sha256 when
    there is one file, else sha256 of ``"<sha256>  <name>\\n"`` lines sorted by name (what
    ``sha256sum * | sha256sum`` prints in a folder holding just those files)."""
    if len(files) == 1:
        return cached_sha256_file(files[0])
    lines = "".join(f"{cached_sha256_file(p)}  {p.name}\n"
                    for p in sorted(files, key=lambda p: p.name))
    return hashlib.sha256(lines.encode()).hexdigest()
