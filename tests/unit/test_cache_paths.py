"""One cache root: model conversions, data downloads, task summaries and responses all live under
``$GENHARNESS_CACHE_DIR``; ``$GENHARNESS_RESPONSE_CACHE`` moves the responses alone. Each user
of a cache folder asks ``harness.cache_paths`` for it (no module keeps a path of its own), so
what they write is checked here where it lands."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import cache_paths
from harness.config import RunConfig
from harness.models import backends
from harness.run.evaluate import evaluate
from harness.sources.files import fetch_file
from harness.testing import scripted_backend


def test_every_cache_lives_under_one_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENHARNESS_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.delenv("GENHARNESS_RESPONSE_CACHE", raising=False)
    root = tmp_path / "root"
    assert cache_paths.cache_root() == root
    assert cache_paths.data_dir() == root / "data"
    assert cache_paths.responses_dir() == root / "responses"
    monkeypatch.setenv("GENHARNESS_RESPONSE_CACHE", str(tmp_path / "elsewhere"))
    assert cache_paths.responses_dir() == tmp_path / "elsewhere"
    assert cache_paths.data_dir() == root / "data"
    monkeypatch.delenv("GENHARNESS_CACHE_DIR")
    assert "site-packages" not in str(cache_paths.cache_root())


def test_downloads_and_responses_land_in_their_folders(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENHARNESS_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.delenv("GENHARNESS_RESPONSE_CACHE", raising=False)
    src = tmp_path / "remote.jsonl"
    src.write_text('{"x": 1}\n')
    got = fetch_file(tmp_path / "absent.jsonl", src.as_uri())
    assert got.parent.parent == tmp_path / "root" / "data" and got.read_text() == '{"x": 1}\n'
    cfg = RunConfig(model="scripted:1", tasks=["lengthgen/addition"], limit_per_bucket=1,
                    output_dir=tmp_path / "run")
    monkeypatch.setitem(backends.BACKENDS.items, "scripted", scripted_backend)
    evaluate(cfg)  # the model loaded by the run, so the run caches its responses
    assert [p.name for p in (tmp_path / "root" / "responses").iterdir()] == ["responses.sqlite"]
