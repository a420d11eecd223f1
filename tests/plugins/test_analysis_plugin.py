"""An analysis from a plugin package: ``harness.analyses`` is an entry-point group like the others
(listed by ``plugins list``, checked by ``--check``, shown by ``analyses list`` with its origin)."""

from __future__ import annotations

import json
from pathlib import Path

from harness import plugins
from tests.plugins.fakedist import harness, make_dist

MODULE = """\
from harness.analyses.registry import AnalysisResult, analysis


@analysis("n_samples")
def n_samples(samples, buckets, params, seed):
    \"\"\"How many samples the task has.\"\"\"
    return AnalysisResult(name="n_samples", value=float(len(samples)), n=len(samples))
"""


def test_analysis_plugins_are_listed_checked_and_used(tmp_path: Path) -> None:
    assert plugins.ANALYSES in plugins.GROUPS
    site = tmp_path / "site"
    make_dist(site, "count-analysis", "0.2",
              {"harness.analyses": {"n_samples": "countan:n_samples"}}, {"countan.py": MODULE})
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    row = next(ln for ln in r.stdout.splitlines() if "count-analysis" in ln)
    assert "analyses" in row and "n_samples" in row and "ok" in row
    r = harness(site, "analyses", "list", "--json")
    assert r.returncode == 0, r.stderr
    rows = {a["name"]: a for a in json.loads(r.stdout)}
    assert rows["n_samples"]["origin"] == "plugin:count-analysis==0.2"
    assert rows["sgr"]["origin"] == "builtin"
