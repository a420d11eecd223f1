"""``harness leaderboard plan``'s precision rule, and the board's check of it, count only the
buckets a task evaluates: a few-shot condition's ``evaluate`` list (MATH SGR runs levels 4-5 only)
leaves the other buckets empty by design, not short."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.leaderboard.aggregate import board_from_runs
from harness.leaderboard.plan import evaluated_buckets, plan_counts, plan_tasks
from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results, write_run


def test_the_rule_sizes_each_role_and_names_what_the_data_cannot_give() -> None:
    p = plan_counts("t", [("ID", 1000)] * 3 + [("OOD", 1000)] * 2)
    # 97 items per role (the farther end of the interval, at any accuracy): ceil(97 / 2) per bucket
    assert (p.limit, p.n_id, p.n_ood, p.short) == (49, 147, 98, None)
    only_id = plan_counts("t", [("ID", 1000)])
    assert (only_id.limit, only_id.n_ood, only_id.short) == (97, 0, None)
    only_ood = plan_counts("t", [("OOD", 1000)] * 2)  # the role not evaluated is not asked for
    assert (only_ood.limit, only_ood.n_id, only_ood.half_id, only_ood.short) == (49, 0, 0.0, None)
    scarce = plan_counts("t", [("ID", 10), ("OOD", 1000)])
    assert scarce.short is not None and "10 items in its smallest bucket" in scarce.short


def test_evaluated_buckets_from_conditions() -> None:
    assert evaluated_buckets([[4.0, 5.0], [4, 5], None]) is None  # one condition runs them all
    assert evaluated_buckets([[4.0, 5.0], [5.0]]) == {"4", "5"}
    assert evaluated_buckets([]) is None


def test_math_sgr_is_planned_on_the_levels_it_runs(shared_data: Path) -> None:
    [sgr] = plan_tasks(["easy2hard/math_sgr"])
    [math] = plan_tasks(["easy2hard/math"])
    assert (sgr.n_id, sgr.n_ood, sgr.short) == (0, 98, None) and sgr.limit == 49
    assert math.n_id > 0 and math.n_ood == 98  # the same buckets, every one evaluated


@pytest.mark.parametrize("evaluate", [[4.0, 5.0], None])
def test_the_board_checks_only_the_evaluated_buckets(tmp_path: Path, evaluate: object) -> None:
    cond = {"id": "easy", "k": None, "pool": [1.0], "evaluate": evaluate}
    buckets = [("1", "ID", 0, 0.0), ("4", "OOD", 47, 5.0), ("5", "OOD", 47, 9.0)]
    spec = TaskSpecLite("easy2hard/x", buckets,
                        spec_extra={"fewshot": {"k": 1, "conditions": [cond]}})
    board = board_from_runs([write_run(tmp_path / "r", make_results("m", [spec]))]).board
    if evaluate is None:  # bucket 1 should have run: 0 ID items is a shortfall
        [why] = board.precision.short
        assert "0 items in its smallest bucket" in why
    else:
        assert board.precision.short == [] and board.precision.tasks_meeting == 1
