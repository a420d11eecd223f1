"""results.json's ``harness.git_commit`` names the checkout the harness runs from (the
reproduce line's ``git checkout`` needs it), wherever the module that reads it lives."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.run.results import harness_info

ROOT = Path(__file__).resolve().parents[2]


def test_the_commit_is_the_checkouts() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    info = harness_info()
    assert info.git_commit == head and info.git_dirty is not None
