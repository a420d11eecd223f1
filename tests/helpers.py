"""Helpers shared by end-to-end tests: run the real ``harness`` command, compare results."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from harness import config

# results.json parts that legitimately differ between two runs of the same work
RUN_SPECIFIC = ("timings", "cache")


def harness_cmd(*args: str) -> list[str]:
    """The argv that runs ``harness`` with this interpreter."""
    return [sys.executable, "-m", "harness", *args]


def run_harness(*args: str, cwd: Path | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``harness ARGS`` to completion, capturing output."""
    full_env = {**os.environ, "COLUMNS": "120", **(env or {})}
    return subprocess.run(harness_cmd(*args), capture_output=True, text=True, cwd=cwd,
                          env=full_env, timeout=900)


def load_results(out_dir: Path) -> dict[str, Any]:
    """The parsed results.json of a run."""
    data: dict[str, Any] = json.loads((out_dir / "results.json").read_text())
    return data


def comparable(results: dict[str, Any]) -> dict[str, Any]:
    """results.json without the parts that change between runs of identical work."""
    out = {k: v for k, v in results.items() if k not in RUN_SPECIFIC}
    out["run"] = {k: v for k, v in results["run"].items() if k not in config.RUN_SPECIFIC}
    return out


def samples_bytes(out_dir: Path) -> dict[str, bytes]:
    """Every per-sample file of a run, by relative path."""
    root = out_dir / "samples"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.jsonl"))}


class StillRunning(BaseException):
    """A block under ``within`` ran too long (a BaseException: code that catches ``Exception``
    cannot swallow it)."""


@contextmanager
def within(seconds: float) -> Iterator[None]:
    """Fail the test (``StillRunning``) when the block is still running after ``seconds``: a
    regression test of a hang fails instead of hanging (main thread, POSIX)."""

    def on_alarm(signum: int, frame: Any) -> None:
        raise StillRunning(f"still running after {seconds:g} s")

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def forget(registry: Any, *names: str) -> None:
    """Take names a test registered out of a registry again (so lists stay as shipped)."""
    for name in names:
        registry.items.pop(name, None)
        registry._checked.discard(name)
