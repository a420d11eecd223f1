"""The horizon search's coverage by simulation (issue 34): every setting's 95% statement holds
the true d50 in at least 93% of the runs of ``bench/results/horizon_sim.json``, the first runs
of each setting replay to the same outcomes (the file is computed, not typed), and the tables of
docs/statistics.md are the file's."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from harness.scoring.horizon_sim import SETTINGS, coverage, holds, simulate

ROOT = Path(__file__).resolve().parents[2]
RESULT = ROOT / "bench" / "results" / "horizon_sim.json"
SMALL = ROOT / "bench" / "results" / "horizon_sim_budget20.json"  # the sized row's search
DOC = ROOT / "docs" / "statistics.md"
REPLAY = 12  # runs of each setting replayed here (the bench ran hundreds)


@pytest.fixture(scope="module")
def bench() -> dict[str, object]:
    data: dict[str, object] = json.loads(RESULT.read_text())
    return data


def _block(name: str) -> str:
    text = DOC.read_text()
    return text.split(f"<!-- {name}:start -->\n", 1)[1].split(f"\n<!-- {name}:end -->", 1)[0]


def test_every_setting_covers_at_least_93_percent(bench: dict[str, object]) -> None:
    rows = bench["coverage"]
    assert isinstance(rows, list)
    assert [r["setting"] for r in rows] == [s.name for s in SETTINGS]
    for r in rows:
        assert r["runs"] >= 200 and r["held"] == r["runs"] - len(r["missed"])
        assert r["held"] / r["runs"] >= 0.93, r


@pytest.mark.parametrize("setting", SETTINGS, ids=[s.name for s in SETTINGS])
def test_the_first_runs_replay_to_the_recorded_outcomes(bench: dict[str, object],
                                                        setting: object) -> None:
    rows = {r["setting"]: r for r in bench["coverage"]}  # type: ignore[attr-defined]
    row = rows[setting.name]  # type: ignore[attr-defined]
    got = coverage(setting, REPLAY)  # type: ignore[arg-type]
    assert list(got.missed) == [r for r in row["missed"] if r < REPLAY]


def test_the_doc_tables_are_the_bench_files(bench: dict[str, object]) -> None:
    assert _block("horizon-coverage") == bench["coverage_table"]
    assert _block("horizon-budget") == bench["budget_table"]


@pytest.fixture(scope="module")
def small() -> dict[str, object]:
    data: dict[str, object] = json.loads(SMALL.read_text())
    return data


def test_the_small_search_covers_too(small: dict[str, object]) -> None:
    """The search a sized board row runs (20 answers, ID buckets of 8): every setting's
    statement still holds the truth in at least 93% of 200 runs, the first runs replay, and
    the doc's table is the file's."""
    rows = {r["setting"]: r for r in small["coverage"]}  # type: ignore[attr-defined]
    assert list(rows) == [s.name for s in SETTINGS]
    budget, id_items = small["budget_per_run"], small["id_items"]
    assert (budget, id_items) == (20, 8)
    for s in SETTINGS:
        r = rows[s.name]
        assert r["runs"] >= 200 and r["held"] == r["runs"] - len(r["missed"])
        assert r["held"] / r["runs"] >= 0.93, r
        got = coverage(s, REPLAY // 2, budget=20, id_items=8)
        assert list(got.missed) == [m for m in r["missed"] if m < REPLAY // 2]
    assert _block("horizon-coverage-budget20") == small["coverage_table"]


def test_a_miss_is_a_miss() -> None:
    """The coverage count can fail: a setting whose truth is moved off the search's statement
    is counted as missed."""
    s = SETTINGS[0]
    est = simulate(s, 0, 200, 40, math.log(2.0))
    assert holds(s, est)
    moved = type(s)(s.name, est.upper * 1.5 if est.upper else 1e9, s.sigma, s.top, s.baseline)
    assert not holds(moved, est)


def test_the_agreement_table_is_the_boards() -> None:
    from harness.leaderboard.horizons import agreement_table
    from harness.leaderboard.inputs import load_leaderboard

    board = load_leaderboard(ROOT / "leaderboards" / "offline-small" / "leaderboard.json")
    assert _block("horizon-agreement") == agreement_table(board)
