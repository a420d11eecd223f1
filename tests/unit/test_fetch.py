"""Data files downloaded from a URL into the cache when the local path is absent (file:// and a
loopback HTTP server; never the network)."""

from __future__ import annotations

import hashlib
import http.server
import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.sources.files import fetch_file, read_records
from harness.spec.sources import FilesSource


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GENHARNESS_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[str]:
    root = tmp_path / "www"
    root.mkdir()
    (root / "rows.jsonl").write_text(json.dumps({"q": "a", "d": 1}) + "\n")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a: object, **kw: object) -> None:
            super().__init__(*a, directory=str(root), **kw)  # type: ignore[arg-type]

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_local_path_wins(tmp_path: Path, cache: Path) -> None:
    f = tmp_path / "x.txt"
    f.write_text("hi")
    assert fetch_file(f, "file:///nonexistent") == f and not cache.exists()


def test_file_url_downloaded_once_and_checked(tmp_path: Path, cache: Path) -> None:
    src = tmp_path / "remote.txt"
    src.write_text("IN: jump OUT: I_JUMP\n")
    digest = hashlib.sha256(src.read_bytes()).hexdigest()
    got = fetch_file(tmp_path / "absent.txt", src.as_uri(), digest)
    assert got.read_text() == src.read_text() and cache in got.parents and got.name == "remote.txt"
    src.write_text("changed")  # the cached copy is used from now on
    assert fetch_file(tmp_path / "absent.txt", src.as_uri(), digest).read_text().startswith("IN:")
    other = tmp_path / "other.txt"
    other.write_text("x")
    with pytest.raises(HarnessError, match="source.sha256"):
        fetch_file(tmp_path / "absent.txt", other.as_uri(), digest)
    with pytest.raises(HarnessError, match="cannot download"):
        fetch_file(tmp_path / "absent.txt", (tmp_path / "missing.txt").as_uri())


def test_files_source_from_loopback_http(tmp_path: Path, cache: Path, server: str) -> None:
    src = FilesSource(type="files", path="absent/rows.jsonl", url=f"{server}/rows.jsonl")
    assert read_records(src, tmp_path) == [{"q": "a", "d": 1}]
    assert list(cache.rglob("rows.jsonl"))
