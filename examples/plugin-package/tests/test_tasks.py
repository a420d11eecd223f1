"""The package's own tests: every task validates and runs, and the toy model behaves as designed.

``check_task_package`` (from ``harness.api``) does the work: it validates each task of the
package with
the harness's schema, then runs a few items per bucket of every template through the real runner
with an oracle model (which answers every prompt with its reference answer, so every sample must
score 1.0) and checks the results and samples files it wrote.
"""

from __future__ import annotations

from pathlib import Path

from harness_example.model import make_model

from harness.api import check_task_package


def test_every_task_validates_and_dry_runs(tmp_path: Path) -> None:
    checks = check_task_package("mybench", output_dir=tmp_path)
    assert [c.address for c in checks] == ["mybench/digitsum"]
    assert all(c.origin.startswith("plugin:genharness-example-plugin==") for c in checks)
    assert all(c.n_samples > 0 for c in checks)


def test_rule_model_breaks_past_its_capacity(tmp_path: Path) -> None:
    checks = check_task_package("mybench", model=make_model("rules", {"capacity": "6"}, 1),
                                limit_per_bucket=3, output_dir=tmp_path)
    for rep in checks[0].result.templates:
        acc = {b.bucket: b.accuracy for b in rep.buckets}
        assert acc == {"2": 1.0, "3": 1.0, "4": 1.0, "5": 1.0, "6": 1.0,
                       "8": 0.0, "10": 0.0, "12": 0.0}
