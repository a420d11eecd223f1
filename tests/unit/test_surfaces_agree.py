"""One number, one interval (issue 23): the CLI table, results.json, ``harness compare`` and the
board's main table, task pages and model pages show the identical interval for the same
quantity, and no gap or retention interval on the board has zero width."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from harness.cli.run_tables import gap_lines
from harness.config import RunConfig
from harness.leaderboard.build import build
from harness.leaderboard.paired import compare_runs
from harness.leaderboard.plots import task_file_stem
from harness.run.evaluate import evaluate
from harness.run.results import Results
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, oracle_model

TASKS = ["lengthgen/addition", "lengthgen/copy"]


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


def _run(root: Path, name: str, seed: int, right: int) -> Path:
    """A run right on every short answer and on ``right`` of 4 long ones (a prompt hash), so ID
    is high, OOD low, and each task's gap is measured."""
    index = TaskIndex.build([])
    out = root / name
    for ref in index.resolve(TASKS):
        cfg = RunConfig(model=f"scripted:{name}", tasks=[ref.address], seed=seed,
                        limit_per_bucket=12, use_cache=False, output_dir=out / ref.name)
        oracle = oracle_model(index.spec(ref), ref, cfg)

        def answer(p: str, o: ScriptedLM = oracle) -> str:
            gold = o._text(p)
            return gold if len(gold) <= 6 or _h(p) % 4 < right else "none"

        evaluate(cfg, model=ScriptedLM(answer, name=name))
    return out


@pytest.fixture(scope="module")
def board(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[Path]]:
    root = tmp_path_factory.mktemp("agree")
    runs = [p for name, seed, right in (("alpha", 0, 1), ("beta", 0, 2), ("gamma", 1, 1))
            for p in sorted(_run(root, name, seed, right).glob("*/results.json"))]
    build(runs, root / "board", title="agree", png=False)
    return root / "board", runs


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def test_every_surface_shows_results_json_interval(board: tuple[Path, list[Path]]) -> None:
    out, runs = board
    lb = json.loads((out / "leaderboard.json").read_text())
    label = {e["id"]: e["label"] for e in lb["entries"]}
    by_label = {e["label"]: e for e in lb["entries"]}
    checked = 0
    for path in runs:
        res = Results.model_validate_json(path.read_text())
        model = res.model.name
        [task] = res.tasks
        g = task.templates[0].gaps
        assert g.status == "measured" and g.id_ood is not None and g.retention is not None
        lo, hi = g.id_ood.ci_low, g.id_ood.ci_high
        rlo, rhi = g.retention.ci_low, g.retention.ci_high
        assert lo < hi and rlo is not None and rhi is not None and rlo < rhi
        text = f"{_pct(g.id_ood.value)} pts  95% CI [{_pct(lo)}, {_pct(hi)}]"
        assert any(text in line for line in gap_lines(g))  # the CLI table
        # leaderboard.json: the task row (task and model pages) carries the same numbers
        [tb] = [t for t in lb["tasks"] if t["task"] == task.task]
        [row] = [r for r in tb["rows"] if label[r["entry"]] == model]
        assert (row["gap_ci_low"], row["gap_ci_high"]) == (lo, hi)
        assert (row["retention_ci_low"], row["retention_ci_high"]) == (rlo, rhi)
        cell = f"[{_pct(lo)}, {_pct(hi)}]</span>"
        page = (out / "tasks" / f"{task_file_stem(task.task)}.html").read_text()
        assert cell in page
        assert f"[{rlo:.3g}, {rhi:.3g}]</span>" in page
        mpage = (out / "models" / f"{row['entry']}.html").read_text()
        assert cell in mpage
        checked += 1
    assert checked == len(runs) == 6
    # the main table: an entry's mean gap over its tasks is the MOVER interval of the tasks' own
    # intervals; over one task that is the task's interval (beta on copy alone is not a board
    # entry, so check the formula against leaderboard.json, and the markdown table against it)
    md = (out / "leaderboard.md").read_text()
    for e in lb["entries"]:
        if e["gap"] is None:
            continue
        assert e["gap_ci_low"] < e["gap"] < e["gap_ci_high"]
        assert f"{_pct(e['gap'])} [{_pct(e['gap_ci_low'])}, {_pct(e['gap_ci_high'])}]" in md
        assert e["overall"]["ci_low"] < e["overall"]["ci_high"]
    assert set(by_label) == {"alpha", "beta", "gamma"}


def test_compare_and_board_pairs_agree(board: tuple[Path, list[Path]]) -> None:
    out, runs = board
    lb = json.loads((out / "leaderboard.json").read_text())
    label = {e["id"]: e["label"] for e in lb["entries"]}
    run = {(p.parent.parent.name, p.parent.name): p for p in runs}
    seen = set()
    for tb in lb["tasks"]:
        for pair in tb["pairs"]:
            a, b = label[pair["a"]], label[pair["b"]]
            stem = tb["task"].split("/")[1]
            c = compare_runs(run[(a, stem)], run[(b, stem)])
            [t] = c.tasks
            assert t.overall.paired == pair["paired"]
            assert (t.overall.ci_low, t.overall.ci_high) == (pair["ci_low"], pair["ci_high"])
            assert t.overall.diff == pair["diff"]
            seen.add((frozenset((a, b)), pair["paired"]))
    # same seed: paired; another seed (other prompts): compared as independent samples
    assert (frozenset(("alpha", "beta")), True) in seen
    assert (frozenset(("alpha", "gamma")), False) in seen
    page = (out / "tasks" / f"{task_file_stem(TASKS[0])}.html").read_text()
    assert "unpaired (items differ)" in page and re.search(r">paired<", page)
