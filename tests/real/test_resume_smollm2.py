"""Crash-safe resume on the real default model: SIGKILL part-way, re-run, same results."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_resume import kill_when, rows
from tests.helpers import comparable, load_results, run_harness, samples_bytes

pytestmark = pytest.mark.slow


def test_smollm2_resume_after_kill(tmp_path: Path) -> None:
    def args(out: str, cache: Path) -> list[str]:
        return ["eval", "--model", "hf:smollm2-135m", "--tasks", "lengthgen/copy",
                "--limit-per-bucket", "2", "--batch-size", "2", "--output-dir",
                str(tmp_path / out), "--cache-dir", str(cache)]

    clean = run_harness(*args("clean", tmp_path / "fresh"))
    assert clean.returncode == 0, clean.stderr
    total = load_results(tmp_path / "clean")["cache"]["misses"]
    cache = tmp_path / "cache"
    kill_when(args("killed", cache), cache, total // 2)
    finished = rows(cache)
    assert total // 2 <= finished < total
    resumed = run_harness(*args("resumed", cache))
    assert resumed.returncode == 0, resumed.stderr
    assert load_results(tmp_path / "resumed")["cache"]["misses"] == total - finished
    assert comparable(load_results(tmp_path / "resumed")) == comparable(
        load_results(tmp_path / "clean"))
    assert samples_bytes(tmp_path / "resumed") == samples_bytes(tmp_path / "clean")
