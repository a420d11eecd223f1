"""Issue 46: one rule per claim (``leaderboard/claims``), each entry's own precision target
(``leaderboard/precision``), censored d50 summaries and open d50 intervals
(``leaderboard/horizons``): the rules on rows built to sit on each side of them."""

from __future__ import annotations

from typing import Any

import pytest

from harness.leaderboard.board_file import (
    BucketCell,
    EntryPrecision,
    HorizonCell,
    Precision,
    Split,
    TaskRow,
)
from harness.leaderboard.claims import baseline_shift, edge_p, fall_kind
from harness.leaderboard.horizons import d50_text, entry_d50_text, entry_horizons
from harness.leaderboard.precision import entry_mark, precision_words, title_conflict
from harness.leaderboard.registered import gap_arrow, gap_better
from harness.scoring.intervals import diff_interval, p_value, proportion


def _cell(status: str, d50: float | None = None, lo: float | None = None,
          hi: float | None = None, edge: float = 8.0, range_lo: int = 1,
          range_hi: int = 64) -> HorizonCell:
    return HorizonCell(status=status, d50=d50, ci_low=lo, ci_high=hi,
                       factor=None if d50 is None else d50 / edge, edge=edge, range_lo=range_lo,
                       range_hi=range_hi, range_end="spec", top=0.9, spread=0.3, baseline=0.0,
                       items=100, fixed_crossing=None)


def _row(**kw: Any) -> TaskRow:
    base: dict[str, Any] = dict(
        entry="m", template="t", condition="", n_reports=1, n_items=60, n_samples=60,
        accuracy=0.5, n_id=30, n_ood=30, id_accuracy=0.8, ood_accuracy=0.3, status="measured",
        chance=0.0, status_reason=None, gap=0.5, gap_ci_low=0.3, gap_ci_high=0.65,
        gap_p_holm=0.001, retention=None, retention_ci_low=None, retention_ci_high=None,
        retention_unbounded=False, horizon=None, horizon_factor=None, baseline=0.0,
        ood_baseline=0.0, buckets=[], analyses=[], spec_sha256="x", source="s", samples=None,
        viewer=None)
    base.update(kw)
    return TaskRow(**base)


def test_a_gap_significant_only_before_correction_is_not_placed() -> None:
    assert fall_kind(_row(gap_p_holm=0.2, edge_p_holm=0.3)) is None
    assert fall_kind(_row(gap_p_holm=0.04, edge_p_holm=0.2,
                          d50=_cell("measured", 5.0, 4.0, 6.0))) == "inside"


def test_inside_the_id_range_needs_the_whole_d50_interval_below_the_edge() -> None:
    # a significant gap and no significant edge fall said "inside" before: without a search,
    # or with a d50 interval reaching past the last ID value, nothing is said now
    assert fall_kind(_row(edge_p_holm=0.9)) is None
    assert fall_kind(_row(edge_p_holm=0.9, d50=_cell("measured", 9.4, 7.0, 12.0))) is None
    assert fall_kind(_row(edge_p_holm=0.9, d50=_cell("above"))) is None
    assert fall_kind(_row(edge_p_holm=0.9, d50=_cell("measured", 5.0, 3.0, 7.9))) == "inside"


def test_a_fall_the_control_puts_in_the_exemplars_is_shift() -> None:
    # Gemma's count: difficulty -1.1, shift +37.6, a significant edge fall
    row = _row(edge_p_holm=0.001, difficulty=Split(value=-0.011, ci_low=-0.1, ci_high=0.08),
               shift=Split(value=0.376, ci_low=0.25, ci_high=0.5))
    assert fall_kind(row) == "shift"
    both = row.model_copy(update={"difficulty": Split(value=0.3, ci_low=0.1, ci_high=0.5)})
    assert fall_kind(both) == "edge"


def test_a_gap_the_baselines_explain_is_not_a_finding() -> None:
    # Qwen's ladder_range: OOD constant baseline 57.5%, ID 32.5%
    row = _row(gap=-0.175, gap_ci_low=-0.375, gap_ci_high=0.04, gap_p_holm=0.01,
               baseline=0.325, ood_baseline=0.575)
    assert baseline_shift(row) == pytest.approx(0.25)
    assert fall_kind(row) == "baseline"
    diff = Split(value=-0.325, ci_low=-0.498, ci_high=-0.135)
    assert baseline_shift(row, diff) == pytest.approx(0.25)
    assert baseline_shift(row.model_copy(update={"ood_baseline": 0.40})) is None


def test_edge_p_inverts_the_interval_the_edge_cell_shows() -> None:
    cells = [BucketCell(label="8", n=30, accuracy=0.9, ci_low=0.7, ci_high=0.97),
             BucketCell(label="9", n=30, accuracy=0.6, ci_low=0.4, ci_high=0.75)]
    row = _row(buckets=cells, edge=Split(value=0.3, ci_low=0.1, ci_high=0.5),
               edge_buckets="8 → 9")
    want = p_value(lambda lv: diff_interval(proportion([1.0] * 27 + [0.0] * 3),
                                            proportion([1.0] * 18 + [0.0] * 12), lv))
    got = edge_p(row, None)
    assert got is not None and got == pytest.approx(want, rel=1e-6) and got < 0.05
    assert edge_p(row.model_copy(update={"edge": None, "edge_buckets": None}), None) is None


def test_each_entry_is_stated_against_its_own_target() -> None:
    p = Precision(target=0.10, min_per_bucket=30, tasks_meeting=61, task_rows=68, short=[],
                  entries=[EntryPrecision(entry="a", target=0.10, min_per_bucket=30, sized=False,
                                          meeting=27, rows=34),
                           EntryPrecision(entry="q", target=0.25, min_per_bucket=0, sized=True,
                                          meeting=34, rows=34)])
    words = precision_words(p, {"a": "gemma", "q": "qwen"})
    assert "gemma: 27 of 34 task rows within ±10 pts" in words
    assert "qwen: 34 of 34 task rows within ±25 pts (sized with --target-ci)" in words
    assert entry_mark(p, "q") == "±25: 34/34"
    assert title_conflict("Small models at +-10 pts (95%)", p) is not None
    assert title_conflict("Small models, ±10 and ±25 points", p) is None
    assert title_conflict("Small models, seed 0", p) is None


def test_the_gap_is_not_ranked_as_a_merit() -> None:
    assert gap_better("id_ood") == "none" and gap_arrow("id_ood") == ""
    assert gap_better("retention") == "high"


def test_the_d50_median_counts_censored_tasks_where_they_lie() -> None:
    rows = {"a": _row(d50=_cell("measured", 4.0, 3.0, 5.0)),    # ×0.5
            "b": _row(d50=_cell("above", range_hi=64)),        # ≥ ×8
            "c": _row(d50=_cell("above", range_hi=16)),        # ≥ ×2
            "d": _row(d50=_cell("misfit"))}
    lo, hi, n, above = entry_horizons(rows)
    # dropping the censored ones said ×0.5; counted, the median is at least ×2
    assert (lo, hi, n, above) == (2.0, None, 4, 2)
    assert entry_d50_text(lo, n, above, hi) == "≥ 2.00 (4 tasks, 2 ≥ max)"
    # over the tasks searched for every entry only
    assert entry_horizons(rows, {"a"})[:2] == (0.5, 0.5)
    two = {"a": rows["a"], "e": _row(d50=_cell("measured", 12.0, 10.0, 14.0))}
    lo, hi, _, _ = entry_horizons(two)
    assert lo == hi == pytest.approx(1.0)


def test_a_d50_interval_past_the_range_is_printed_open() -> None:
    # Gemma variable_chain: 2.28 [0.384, 6.96], below the smallest chain length
    text = d50_text(_cell("measured", 2.28, 0.384, 6.96, edge=4.0))
    assert text.startswith("2.28 [< 1, 6.96]")
    assert d50_text(_cell("measured", 30.0, 20.0, None)).startswith("30 [20, > 64]")


def test_a_task_without_id_items_counts_only_above_its_ood_baseline() -> None:
    from harness.leaderboard.claims import off_floor

    sgr = dict(n_id=0, id_accuracy=None, gap=None, gap_ci_low=None, gap_ci_high=None,
               n_ood=48, ood_baseline=0.04)
    assert not off_floor(_row(**sgr, ood_accuracy=0.0))  # math_sgr for a model at the floor
    assert off_floor(_row(**sgr, ood_accuracy=0.5))
    assert not off_floor(_row(status="floor"))
    assert off_floor(_row())  # ID items: the floor rule's status decides
