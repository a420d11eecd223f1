"""A run records whether the checkout had uncommitted code or task changes; the cost table that
scripts/build_leaderboard.sh writes while it builds a board does not count."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harness.run.results import COSTS_TABLE, checkout_dirty


def _repo(tmp_path: Path) -> Path:
    for rel in ("harness/x.py", COSTS_TABLE, "tasks/t.yaml", "README.md"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("a\n")
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "init"], check=True)
    return tmp_path


def test_code_and_task_edits_count_but_the_cost_table_and_docs_do_not(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert not checkout_dirty(root)
    (root / COSTS_TABLE).write_text("b\n")
    (root / "README.md").write_text("b\n")
    assert not checkout_dirty(root)
    (root / "tasks/t.yaml").write_text("b\n")
    assert checkout_dirty(root)
    (root / "tasks/t.yaml").write_text("a\n")
    (root / "harness/new.py").write_text("b\n")
    assert checkout_dirty(root)
