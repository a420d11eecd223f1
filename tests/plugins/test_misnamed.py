"""A metric whose decorator names it differently from its entry point answers to both names:
a warning when it is looked up, an error under ``plugins list --check`` (issue 37, point 7)."""

from __future__ import annotations

from pathlib import Path

from tests.plugins.fakedist import harness, make_dist, task_yaml, warnings_in

KNIGHTS = """\
from harness.api import metric


@metric("knight_match")
def knight(extracted: str, target: str) -> float:
    return float(extracted.strip() == target.strip())
"""


def test_a_metric_registered_under_two_names_is_named(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "knights", "0.1", {"harness.metrics": {"knight_score": "knights:knight"}},
              {"knights.py": KNIGHTS})
    check = harness(site, "plugins", "list", "--check")
    assert check.returncode == 1, check.stdout
    line = next(ln for ln in check.stdout.splitlines() if ln.startswith("knights"))
    assert "error: misnamed: metric entry point 'knight_score' of knights==0.1" in line, line
    assert "registered by its code as 'knight_match' too" in line
    task = tmp_path / "t.yaml"
    task.write_text(task_yaml("t", metric="knight_score"))
    run = harness(site, "tasks", "validate", "--no-items", str(task))
    assert run.returncode == 0, run.stderr
    (warning,) = warnings_in(run.stderr)
    assert "metric entry point 'knight_score'" in warning and "'knight_match'" in warning
    assert "give the decorator the entry point's name" in warning
