"""A board row sized by ``harness eval --target-ci`` (issue 34, the third model's row): the
board carries the run's rounds.json, judges those rows against their own half-width instead
of the board's target and items-per-bucket floor, says so in its precision statement, and
rebuilds byte for byte from its own copies."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.leaderboard.build import build
from harness.leaderboard.check import rebuild_diff
from harness.run.evaluate import evaluate
from harness.run.results import Results
from harness.run.rounds import run_rounds
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, oracle_model

TASK = "lengthgen/copy"


def _run(tmp_path: Path, name: str, target: float | None, limit: int) -> Path:
    """A run of a scripted model that answers about half the items right: in rounds towards
    ``target`` (capped at ``limit``), or plainly at ``limit``."""
    index = TaskIndex.build([])
    [ref] = index.resolve([TASK])
    cfg = RunConfig(model=f"scripted:{name}", tasks=[TASK], seed=0, limit_per_bucket=limit,
                    output_dir=tmp_path / name)
    oracle = oracle_model(index.spec(ref), ref, cfg)
    model = ScriptedLM(lambda p: oracle._text(p) if len(p) % 2 else "no", name=name)

    def one(c: RunConfig, replace: bool) -> Results:
        return evaluate(c, model=model, overwrite=replace)

    if target is None:
        evaluate(cfg, model=model)
    else:
        run_rounds(cfg, target, 8, one)
    return cfg.output_dir


def test_a_sized_row_is_judged_against_its_own_target(tmp_path: Path) -> None:
    sized = _run(tmp_path, "sized", 0.25, 16)
    plain = _run(tmp_path, "plain", None, 8)
    rounds = json.loads((sized / "rounds.json").read_text())
    board = build([plain, sized], tmp_path / "board", png=False).board
    p = board.precision
    # the plain row misses the board's ±10 and its 30 items per bucket; the sized one is
    # judged against ±25 alone
    assert [s.split(":")[0] for s in p.short] == [f"plain {TASK}"]
    assert "items in its smallest bucket" in p.short[0]
    meets = rounds["stopped"] == "target met"
    assert p.sized == [f"sized: 1 task rows sized with --target-ci to ±25 pts (95%) instead of "
                       f"±10 pts and 30 items per bucket; {int(meets)} of 1 meet it"]
    assert p.tasks_meeting == int(meets) and p.task_rows == 2
    src = {s.entry: s for s in board.sources}
    assert src["sized"].target_ci == 0.25 and src["plain"].target_ci is None
    copy = tmp_path / "board" / src["sized"].path.replace("results.json", "rounds.json")
    assert json.loads(copy.read_text()) == rounds
    text = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "sized: 1 of 1 task rows within ±25 pts (sized with --target-ci)" in text
    assert "plain: " in text and "task rows within ±10 pts, ≥ 30 items per bucket" in text
    assert "sized with --target-ci" in (tmp_path / "board" / "index.html").read_text()
    assert rebuild_diff(tmp_path / "board", tmp_path / "again") == []


def test_a_board_without_sized_rows_keeps_its_keys(tmp_path: Path) -> None:
    plain = _run(tmp_path, "plain", None, 8)
    assert build([plain], tmp_path / "board", png=False).board.precision.sized == []
    on_disk = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    assert "sized" not in on_disk["precision"]
    assert "target_ci" not in on_disk["sources"][0]


def test_a_rounds_file_of_another_run_is_one_line(tmp_path: Path) -> None:
    sized = _run(tmp_path, "sized", 0.25, 16)
    data = json.loads((sized / "rounds.json").read_text())
    data["rounds"][-1]["limit"] += 1
    (sized / "rounds.json").write_text(json.dumps(data))
    with pytest.raises(HarnessError, match=r"rounds\.json: its last round ran \d+ items per "
                                           r"bucket but results\.json ran \d+"):
        build([sized], tmp_path / "board", png=False)
    (sized / "rounds.json").write_text("{}")
    with pytest.raises(HarnessError, match=r"rounds\.json: not a --target-ci rounds file"):
        build([sized], tmp_path / "board", png=False)


def test_a_title_naming_one_target_is_refused_when_entries_differ(tmp_path: Path) -> None:
    sized = _run(tmp_path, "sized", 0.25, 16)
    plain = _run(tmp_path, "plain", None, 8)
    with pytest.raises(HarnessError, match=r"--title .*names ±10 pts, but some entries are "
                                           r"judged against ±25 pts"):
        build([plain, sized], tmp_path / "board", png=False, title="Two models at +-10 pts")
    assert not (tmp_path / "board").exists()  # nothing written


def test_rescore_takes_a_new_title_and_a_newer_run_in_place_of_the_old(tmp_path: Path) -> None:
    import subprocess
    import sys

    from harness.leaderboard.inputs import load_leaderboard

    old = _run(tmp_path, "plain", None, 8)
    other = _run(tmp_path, "other", None, 8)
    build([old, other], tmp_path / "board", png=False, title="Before")
    before = load_leaderboard(tmp_path / "board" / "leaderboard.json")
    n_before = next(r.n_items for t in before.tasks for r in t.rows if r.entry == "plain")
    newer = _run(tmp_path / "again", "plain", None, 12)  # the same model and task, more items
    r = subprocess.run([sys.executable, "-m", "harness", "leaderboard", "rescore",
                        str(tmp_path / "board"), "--title", "After", "--run", str(newer)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    board = load_leaderboard(tmp_path / "board" / "leaderboard.json")
    assert board.title == "After" and board.build is not None and board.build.title == "After"
    # the newer run took the old one's place (first), the other entry's run kept its own
    assert [s.entry for s in board.sources] == ["plain", "other"]
    row = next(r for t in board.tasks for r in t.rows if r.entry == "plain")
    assert row.n_items == n_before * 12 // 8  # 12 items per bucket now, not 8
    bad = subprocess.run([sys.executable, "-m", "harness", "leaderboard", "rescore",
                          str(tmp_path / "board"), "--run", str(tmp_path / "nowhere")],
                         capture_output=True, text=True)
    assert bad.returncode != 0 and "--run" in bad.stderr and "Traceback" not in bad.stderr
