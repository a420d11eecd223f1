"""The compositionality gap against hand-computed cases."""

from __future__ import annotations

import pytest

from harness.analyses.compositionality import compositionality_gap
from harness.analyses.registry import get_analysis
from harness.scoring.records import SampleRecord


def rec(item: str, template: str, score: float, role: str = "ID", comp: str = "a") -> SampleRecord:
    return SampleRecord(task="t", id=item, template=template, fewshot_ids=[], difficulty=0.0,
                        bucket="0", bucket_index=0, role=role, prompt="p", target="x", output="",
                        extracted="", score=score, meta={"composition": comp})  # type: ignore[arg-type]


def item(i: str, two: float, h1: float, h2: float, role: str = "ID",
         comp: str = "a") -> list[SampleRecord]:
    return [rec(i, "two_hop", two, role, comp), rec(i, "hop1", h1, role, comp),
            rec(i, "hop2", h2, role, comp)]


def test_hand_computed_gap() -> None:
    samples = [
        *item("1", 1, 1, 1),  # eligible, composed right
        *item("2", 0, 1, 1),  # eligible, composed wrong
        *item("3", 0, 1, 1, "OOD", "b"),  # eligible, wrong
        *item("4", 0, 1, 1, "OOD", "b"),  # eligible, wrong
        *item("5", 0, 0, 1),  # not eligible (hop1 wrong)
        *item("6", 1, 1, 0),  # not eligible (hop2 wrong)
    ]
    res = compositionality_gap(samples, [], {"group_by": "composition"}, seed=0)
    assert res.n == 4 and res.value == pytest.approx(3 / 4)
    assert res.details["by_role"]["ID"] == {"value": 0.5, "n": 2}
    assert res.details["by_role"]["OOD"] == {"value": 1.0, "n": 2}
    assert res.details["by_group"] == {"a": {"value": 0.5, "n": 2}, "b": {"value": 1.0, "n": 2}}
    assert res.ci_low is not None and res.ci_high is not None
    assert 0.0 <= res.ci_low <= 0.75 <= res.ci_high <= 1.0
    again = compositionality_gap(samples, [], {"group_by": "composition"}, seed=0)
    assert again == res
    assert get_analysis("compositionality_gap") is compositionality_gap


def test_no_eligible_items_and_bad_params() -> None:
    res = compositionality_gap(item("1", 1, 0, 0), [], {}, seed=0)
    assert res.value is None and res.n == 0
    with pytest.raises(ValueError, match="params.twohop: Extra inputs are not permitted"):
        compositionality_gap(item("1", 1, 1, 1), [], {"twohop": "x"}, seed=0)
    skipped = compositionality_gap([rec("1", "two_hop", 1)], [], {}, seed=0)
    assert skipped.value is None and "--templates all" in skipped.details["skipped"]


def test_zero_resamples_is_one_clear_error_not_an_index_error() -> None:
    """Issue 17 item 7: resamples=0 raised IndexError; now one line naming the key."""
    with pytest.raises(ValueError,
                       match=r"^params.resamples: Input should be greater than or equal to 1$"):
        compositionality_gap(item("1", 1, 1, 1), [], {"resamples": 0}, seed=0)
