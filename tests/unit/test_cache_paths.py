"""One cache root: model conversions, data downloads, task summaries and responses all live under
``$GENHARNESS_CACHE_DIR``; ``$GENHARNESS_RESPONSE_CACHE`` moves the responses alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness import cache_paths
from harness.models import aliases
from harness.models.cache import default_cache_dir
from harness.sources.files import cache_dir as data_cache_dir


def test_every_cache_lives_under_one_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENHARNESS_CACHE_DIR", str(tmp_path / "root"))
    monkeypatch.delenv("GENHARNESS_RESPONSE_CACHE", raising=False)
    root = tmp_path / "root"
    assert cache_paths.cache_root() == aliases.cache_dir() == root
    assert data_cache_dir() == root / "data"
    assert default_cache_dir() == root / "responses"
    monkeypatch.setenv("GENHARNESS_RESPONSE_CACHE", str(tmp_path / "elsewhere"))
    assert default_cache_dir() == tmp_path / "elsewhere" and data_cache_dir() == root / "data"
    monkeypatch.delenv("GENHARNESS_CACHE_DIR")
    assert "site-packages" not in str(cache_paths.cache_root())
