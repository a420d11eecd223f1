"""Crash-safe resume: ``kill -9`` a real ``harness eval`` part-way, several times, then re-run.

The re-run sends the model only what had not finished, and its results are identical to an
uninterrupted run's.
"""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import time
from pathlib import Path

from tests.helpers import comparable, harness_cmd, load_results, run_harness, samples_bytes

TASK = "lengthgen/addition"


def rows(cache: Path) -> int:
    db = cache / "responses.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            return int(con.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
        finally:
            con.close()
    except sqlite3.OperationalError:  # table not created yet
        return 0


def kill_when(args: list[str], cache: Path, at: int) -> None:
    """Start the run and SIGKILL it as soon as ``at`` responses are in the cache."""
    proc = subprocess.Popen(harness_cmd(*args), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 300
    while rows(cache) < at and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL, "the run finished before it could be killed"


def test_kill9_at_random_points_then_resume(tiny_model_dir: Path, tmp_path: Path) -> None:
    def args(out: str, cache: Path) -> list[str]:
        return ["eval", "--model", f"hf:{tiny_model_dir}", "--tasks", TASK,
                "--limit-per-bucket", "4", "--batch-size", "1", "--seed", "3",
                "--output-dir", str(tmp_path / out), "--cache-dir", str(cache)]

    clean = run_harness(*args("clean", tmp_path / "fresh"))
    assert clean.returncode == 0, clean.stderr
    total = load_results(tmp_path / "clean")["cache"]["misses"]
    assert total == 44

    cache = tmp_path / "cache"
    rng = random.Random(20261123)
    points = sorted(rng.sample(range(3, total - 8), 2))
    finished = 0
    for n, at in enumerate(points):
        kill_when(args(f"killed{n}", cache), cache, at)
        now = rows(cache)
        assert now >= max(at, finished), "finished responses were lost"
        finished = now
    assert not (tmp_path / f"killed{len(points) - 1}" / "results.json").exists()

    resumed = run_harness(*args("resumed", cache))
    assert resumed.returncode == 0, resumed.stderr
    stats = load_results(tmp_path / "resumed")["cache"]
    assert stats["misses"] == total - finished  # model calls = what had not finished
    assert stats["hits"] == finished
    assert comparable(load_results(tmp_path / "resumed")) == comparable(
        load_results(tmp_path / "clean"))
    assert samples_bytes(tmp_path / "resumed") == samples_bytes(tmp_path / "clean")
