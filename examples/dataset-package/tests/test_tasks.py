"""The package's own tests: every task validates (every record of its data file included) and
runs end to end through the real runner with an oracle model (``check_task_package``)."""

from __future__ import annotations

from pathlib import Path

from harness_unitconv.metrics import within_1pct

from harness.api import check_task_package


def test_every_task_validates_and_dry_runs(tmp_path: Path) -> None:
    checks = check_task_package("unitconv", output_dir=tmp_path)
    assert [c.address for c in checks] == ["unitconv/unit_convert"]
    assert all(c.origin.startswith("plugin:genharness-example-unitconv==") for c in checks)
    assert all(c.n_samples > 0 for c in checks)


def test_the_metric_allows_one_percent() -> None:
    assert within_1pct("about 101.0 m", "100") == 1.0
    assert within_1pct("98.9", "100") == 0.0
    assert within_1pct("no number", "100") == 0.0
