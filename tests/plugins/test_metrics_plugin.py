"""Issue 47: a task with ``scoring.metrics: [exact_match, <plugin metric>]``, the plugin's metric
loaded through its ``harness.metrics`` entry point, reports both per bucket through the
command line: the eval table, results.json, ``harness rescore`` (same bytes) and the board's task
page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.plugins.fakedist import SCRIPTED, harness, make_dist

METRIC = """\
def short(extracted: str, target: str) -> float:
    # partial credit by the target's length: full for 3 symbols or fewer, half past them
    return 1.0 if len(target.split()) <= 3 else 0.5
"""

TASK = """\
name: t
description: Copy letters, scored by two metrics.
source: {type: generator, name: copy, per_bucket: 4}
fields: {target: target, difficulty: length}
buckets: {values: [2, 3, 6]}
roles: {id_max: 3}
templates: [{id: io, prompt: "Copy: {{ text }}\\n=>"}]
output: {type: generate, max_tokens: 20}
scoring: {metrics: [exact_match, t47_short]}
"""


@pytest.fixture()
def site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    make_dist(site, "t47-metric", "0.1.0", {"harness.metrics": {"t47_short": "t47metric:short"}},
              {"t47metric.py": METRIC})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    return site


def test_a_plugin_metric_beside_exact_match_in_table_results_rescore_and_board(
        site: Path, tmp_path: Path) -> None:
    (tmp_path / "inc" / "mine").mkdir(parents=True)
    (tmp_path / "inc" / "mine" / "t.yaml").write_text(TASK)
    run = tmp_path / "run"
    r = harness(site, "eval", "--model", "scripted:empty", "--tasks", "mine/t",
                "--include-path", str(tmp_path / "inc"), "--output-dir", str(run), "--no-cache")
    assert r.returncode == 0, r.stderr
    assert "other metrics (scoring.metrics)" in r.stdout and "t47_short score %" in r.stdout
    text = (run / "results.json").read_text()
    res = json.loads(text)
    assert res["environment"]["plugins"].get("t47-metric") == "0.1.0"
    (rep,) = res["tasks"][0]["templates"]
    assert [b["accuracy"] for b in rep["buckets"]] == [0.0, 0.0, 0.0]  # exact_match: primary
    (other,) = rep["metrics"]
    assert other["metric"] == "t47_short"
    assert [b["accuracy"] for b in other["buckets"]] == [1.0, 1.0, 0.5]
    assert [(x["role"], x["accuracy"]) for x in other["roles"]] == [("ID", 1.0), ("OOD", 0.5)]

    r = harness(site, "rescore", str(run))
    assert r.returncode == 0, r.stderr
    assert (run / "results.json").read_text() == text

    r = harness(site, "leaderboard", "build", str(run), "--out", str(tmp_path / "lb"),
                "--no-png")
    assert r.returncode == 0, r.stderr
    page = next((tmp_path / "lb" / "tasks").glob("*.html")).read_text()
    assert "Other metric: t47_short" in page and "exact_match (primary; also t47_short)" in page
    table = page.split('id="metric-t47_short-buckets"')[1].split("</table>")[0]
    assert table.count("100.0 <small") == 3 and "50.0 <small" in table  # 2, 3, ID; 6 and OOD
