"""Crash-safe resume on the real default model: SIGKILL part-way, re-run, same results."""

from __future__ import annotations

import json
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


def test_smollm2_under_a_larger_budget_asks_only_the_cut_answers(tmp_path: Path) -> None:
    """A run under a cap, then without it on the same cache: the answers that ended before the
    cap come from the cache, only the cut ones reach the model, and the samples are a fresh
    run's."""
    def args(out: str, cache: Path, *more: str) -> list[str]:
        return ["eval", "--model", "hf:smollm2-135m", "--tasks", "lengthgen/copy",
                "--limit-per-bucket", "1", "--batch-size", "1", "--output-dir",
                str(tmp_path / out), "--cache-dir", str(cache), *more]

    cache = tmp_path / "cache"
    capped = run_harness(*args("capped", cache, "--max-answer-tokens", "6"))
    assert capped.returncode == 0, capped.stderr
    calls = [c for text in samples_bytes(tmp_path / "capped").values()
             for line in text.splitlines() for c in json.loads(line)["calls"]]
    cut = sum(1 for c in calls if c.get("cut"))  # written only when true
    assert 0 < cut < len(calls)  # both kinds, or the test shows nothing
    grown = run_harness(*args("grown", cache))
    assert grown.returncode == 0, grown.stderr
    res = load_results(tmp_path / "grown")["cache"]
    assert (res["misses"], res["regrown"]) == (cut, len(calls) - cut)
    assert f"({len(calls) - cut} of them under another budget they ended before)" in grown.stderr
    clean = run_harness(*args("clean", tmp_path / "fresh"))
    assert clean.returncode == 0, clean.stderr
    assert samples_bytes(tmp_path / "grown") == samples_bytes(tmp_path / "clean")
