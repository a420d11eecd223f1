"""The code base stays lint-clean and fully typed: ruff on everything, mypy --strict on harness/."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=600)


def test_ruff_finds_nothing() -> None:
    r = _run("ruff", "check", "--output-format", "concise", "harness", "tests", "bench")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-1000:]


def test_mypy_strict_is_clean(tmp_path: Path) -> None:
    # a cache of its own: nothing written into the checkout by the test run
    r = _run("mypy", "--strict", "--cache-dir", str(tmp_path / "mypy"), "harness")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-1000:]
