"""A gap from a plugin package: ``harness.gaps`` is an entry-point group like the others (listed
and checked by ``plugins list``, shown by ``gaps list`` with its origin), a task names it in
``gaps.report``, its model lands under ``gaps.extra`` of results.json, and a leaderboard built
without the plugin installed shows it as a column (with the default metadata)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from harness import plugins
from tests.helpers import run_harness
from tests.plugins.fakedist import SCRIPTED, harness, make_dist

MODULE = """\
from pydantic import BaseModel

from harness.gaps.registry import gap


class Rate(BaseModel):
    value: float
    n: int


@gap("ood_rate", title="OOD rate")
def ood_rate(ctx):
    \"\"\"Pooled OOD accuracy.\"\"\"
    if not ctx.oods:
        return None
    return Rate(value=sum(ctx.oods) / len(ctx.oods), n=len(ctx.oods))
"""

TASK = """\
name: yesno
description: Say yes (a test task).
source: {{type: files, path: {data}}}
fields: {{difficulty: level, id: uid}}
buckets: {{values: [1, 2, 3, 4]}}
roles: {{id_max: 2}}
templates: [{{id: a, prompt: 'Q: {{{{ q }}}}'}}]
output: {{type: generate, max_tokens: 4}}
gaps: {{report: [id_ood, {gap}], baseline: 0.0,
       baseline_reason: "a test of a gap plugin: the model answers yes to every item"}}
"""


def _task(tmp_path: Path, gap: str) -> Path:
    """A task a model that always answers "yes" gets right on ID and on half of level 3."""
    data = tmp_path / "yesno.jsonl"
    rows = [{"q": f"q{i}", "uid": f"u{i:02d}", "level": i % 4 + 1,
             "target": "yes" if i % 4 < 2 or i % 8 == 2 else "no"} for i in range(32)]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "yesno.yaml").write_text(TASK.format(data=data, gap=gap))
    return tmp_path / "tasks"


def test_gap_plugins_are_listed_checked_used_and_shown_on_a_board(tmp_path: Path) -> None:
    assert plugins.GAPS in plugins.GROUPS
    site = tmp_path / "site"
    make_dist(site, "rate-gap", "0.4", {"harness.gaps": {"ood_rate": "rategap:ood_rate"}},
              {"rategap.py": MODULE})
    make_dist(site, "scripted-model", "0.0.1", SCRIPTED)
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    row = next(ln for ln in r.stdout.splitlines() if "rate-gap" in ln)
    assert "gaps" in row and "ood_rate" in row and "ok" in row
    r = harness(site, "gaps", "list", "--json")
    assert r.returncode == 0, r.stderr
    rows = {g["name"]: g for g in json.loads(r.stdout)}
    assert rows["ood_rate"]["origin"] == "plugin:rate-gap==0.4"
    assert rows["ood_rate"]["description"] == "Pooled OOD accuracy."
    assert rows["id_ood"]["origin"] == "builtin"

    tasks = _task(tmp_path, "ood_rate")
    out = tmp_path / "run"
    r = harness(site, "eval", "--model", "scripted:yes", "--tasks", "mine/yesno",
                "--include-path", str(tasks), "--output-dir", str(out))
    assert r.returncode == 0, r.stderr
    assert "ood_rate: 0.25" in r.stdout  # the terminal report prints it too
    res = json.loads((out / "results.json").read_text())
    gaps = res["tasks"][0]["templates"][0]["gaps"]
    assert gaps["status"] == "measured" and gaps["id_ood"]["value"] == 0.75
    assert gaps["extra"] == {"ood_rate": {"value": 0.25, "n": 16}}
    assert res["environment"]["plugins"] == {"rate-gap": "0.4", "scripted-model": "0.0.1"}

    # the board reads the run, not the plugin: built where the plugin is not installed
    board = tmp_path / "board"
    r = run_harness("leaderboard", "build", str(out), "--out", str(board), "--no-png")
    assert r.returncode == 0, r.stderr
    with (board / "leaderboard.csv").open() as f:
        (line,) = list(csv.DictReader(f))
    assert float(line["ood_rate"]) == 0.25 and line["ood_rate_tasks"] == "1"
    assert "| ood_rate ↑ |" in (board / "leaderboard.md").read_text()


def test_unknown_and_shadowing_gap_plugins(tmp_path: Path) -> None:
    site = tmp_path / "site"
    make_dist(site, "shadow-gap", "1.0", {"harness.gaps": {"id_ood": "rategap:ood_rate"}},
              {"rategap.py": MODULE})
    r = harness(site, "plugins", "list", "--check")
    assert r.returncode == 1 and "shadowed: the built-in gap 'id_ood' is used" in r.stdout
    tasks = _task(tmp_path, "ood_rat")
    r = harness(site, "tasks", "validate", str(tasks / "mine" / "yesno.yaml"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "gaps.report.1: unknown gap 'ood_rat'" in r.stderr
    assert "harness gaps list" in r.stderr
