"""SGR, critical complexity and the 1PL ability fit against hand-computed cases."""

from __future__ import annotations

import math
from typing import Any

import pytest

from harness.analyses.easy2hard import fit_1pl, sgr_value
from harness.analyses.registry import get_analysis
from harness.scoring.records import SampleRecord


def rec(i: int | str, score: float, *, cond: str = "", role: str = "OOD", meta: Any = None,
        difficulty: float = 4.0, template: str = "t", bucket: str = "4") -> SampleRecord:
    return SampleRecord(task="s/t", id=str(i), template=template, condition=cond, fewshot_ids=[],
                        difficulty=difficulty, bucket=bucket, bucket_index=0, role=role,  # type: ignore[arg-type]
                        prompt="p", target="x", output="x", extracted="x", score=score,
                        meta=meta or {})


def sgr_samples(easy: list[float], hard: list[float], none: list[float]) -> list[SampleRecord]:
    out = []
    for cond, scores in (("easy", easy), ("hard", hard), ("none", none)):
        out += [rec(i, s, cond=cond) for i, s in enumerate(scores)]
    return out


def test_sgr_hand_computed() -> None:
    # acc easy 2/4, hard 3/4, none 1/4 → SGR = (0.5 − 0.25) / (0.75 − 0.25) = 0.5
    samples = sgr_samples([1, 1, 0, 0], [1, 1, 1, 0], [1, 0, 0, 0])
    res = get_analysis("sgr")(samples, [], {}, 7)
    assert res.value == pytest.approx(0.5) and res.n == 4
    assert res.details["accuracy"] == {"easy": 0.5, "hard": 0.75, "none": 0.25}
    assert res.details["gap_hard_minus_none"] == pytest.approx(0.5)
    assert res.ci_low is not None and res.ci_high is not None
    assert res.ci_low <= res.value <= res.ci_high
    assert res == get_analysis("sgr")(samples, [], {}, 7)  # seeded
    assert sgr_value(0.5, 0.75, 0.25) == pytest.approx(0.5)


def test_sgr_easy_as_good_as_hard_and_undefined_cases() -> None:
    full = get_analysis("sgr")(sgr_samples([1, 1, 0] * 5, [1, 1, 0] * 5, [0] * 15), [], {}, 0)
    assert full.value == pytest.approx(1.0)
    # every paired resample gives SGR 1: a point is no interval (issue 23), so none is given
    assert full.ci_low is None and full.ci_high is None and "boundary" in full.details["ci"]
    flat = get_analysis("sgr")(sgr_samples([1, 0], [1, 0], [1, 0]), [], {}, 0)
    assert flat.value is None and flat.ci_low is None  # hard == none: nothing to recover
    assert sgr_value(0.3, 0.4, 0.4) is None


def test_sgr_uses_only_items_seen_under_all_conditions_and_custom_names() -> None:
    samples = [rec(0, 1, cond="E"), rec(0, 1, cond="H"), rec(0, 0, cond="Z"),
               rec(1, 0, cond="E"), rec(1, 1, cond="H"), rec(1, 0, cond="Z"),
               rec(2, 1, cond="E")]  # item 2 has no hard/none sample: left out
    res = get_analysis("sgr")(samples, [], {"easy": "E", "hard": "H", "none": "Z"}, 0)
    assert res.n == 2 and res.value == pytest.approx(0.5)
    with pytest.raises(ValueError, match="no sample has condition 'easy'"):
        get_analysis("sgr")(samples, [], {}, 0)


def test_critical_complexity_hand_computed() -> None:
    # level 1: ID 1.0, OOD 0.5 → gap .5; level 2: ID 1.0 OOD 0.0 → gap 1; level 3: .5 vs .5 → 0
    plan = {1: ([1, 1], [1, 0]), 2: ([1, 1], [0, 0]), 3: ([1, 0], [0, 1])}
    samples = []
    for level, (ids, oods) in plan.items():
        samples += [rec(f"{level}i{j}", s, role="ID", meta={"level": level})
                    for j, s in enumerate(ids)]
        samples += [rec(f"{level}o{j}", s, role="OOD", meta={"level": level})
                    for j, s in enumerate(oods)]
    res = get_analysis("critical_complexity")(samples, [], {}, 3)
    assert res.value == 2 and res.n == 12
    rows = {r["level"]: r for r in res.details["levels"]}
    assert [rows[lv]["gap"] for lv in (1, 2, 3)] == [0.5, 1.0, 0.0]
    # level 2 sits at the boundary (ID all right, OOD all wrong): Newcombe's interval reaches 1
    # but is not the point [1, 1] (issue 23)
    assert rows[2]["ci_high"] == 1.0 and rows[2]["ci_low"] < 1.0
    assert rows[1]["n_id"] == 2 and rows[1]["acc_ood"] == 0.5
    # level 2 (gap 1 in every resample) loses only when level 1's OOD resample is all wrong
    # (probability 1/4; ties go to the lower level), so it wins about 3/4 of the resamples
    share = res.details["argmax_share"]
    assert share["2"] == pytest.approx(0.75, abs=0.05) and share["3"] == 0.0


def test_critical_complexity_ties_go_to_the_lowest_level_and_meta_is_required() -> None:
    samples = [rec(f"{lv}{r}", 1.0 if r == "ID" else 0.0, role=r, meta={"level": lv})
               for lv in (3, 1) for r in ("ID", "OOD")]
    assert get_analysis("critical_complexity")(samples, [], {}, 0).value == 1
    with pytest.raises(ValueError, match="no meta field 'level'"):
        get_analysis("critical_complexity")([rec(0, 1.0)], [], {}, 0)


def test_fit_1pl_hand_computed() -> None:
    # all items at b = 0, 3 of 4 right: σ(θ) = 3/4 → θ = ln 3; I = 4 · ¾ · ¼ = ¾
    theta, se = fit_1pl([1, 1, 1, 0], [0, 0, 0, 0]) or (None, None)
    assert theta == pytest.approx(math.log(3)) and se == pytest.approx(1 / math.sqrt(0.75))
    shifted = fit_1pl([1, 1, 1, 0], [2, 2, 2, 2])
    assert shifted is not None and shifted[0] == pytest.approx(2 + math.log(3))
    # two difficulties, symmetric outcomes: b=−1 right 1 of 1... θ = 0 by symmetry
    sym = fit_1pl([1, 0], [-1, 1])
    assert sym is not None and sym[0] == pytest.approx(0.0, abs=1e-9)
    assert fit_1pl([1, 1], [0, 3]) is None and fit_1pl([0, 0], [0, 3]) is None


def test_ability_1pl_analysis_on_the_difficulty_scale() -> None:
    # difficulties 5 (4 items, 3 right): with slope `scale` = 2, 2·(θ − 5) = ln 3 → θ = 5 + ln3/2
    samples = [rec(i, s, difficulty=5.0) for i, s in enumerate([1, 1, 1, 0])]
    res = get_analysis("ability_1pl")(samples, [], {"scale": 2.0}, 0)
    assert res.value == pytest.approx(5 + math.log(3) / 2)
    se = 1 / math.sqrt(0.75) / 2
    assert res.details["se"] == pytest.approx(se)
    assert res.ci_low == pytest.approx(res.value - 1.959963984540054 * se)
    meta = [rec(i, s, meta={"elo": 1200.0}) for i, s in enumerate([1, 0])]
    assert get_analysis("ability_1pl")(meta, [], {"difficulty_field": "elo"}, 0).value == \
        pytest.approx(1200.0)
    allright = get_analysis("ability_1pl")([rec(0, 1.0), rec(1, 1.0)], [], {}, 0)
    assert allright.value is None and "unbounded" in allright.details["reason"]
    with pytest.raises(ValueError, match="scale"):
        get_analysis("ability_1pl")(samples, [], {"scale": 0}, 0)


def test_sgr_is_none_when_hard_is_not_better_than_none() -> None:
    """Issue 17 item 3: both supervisions worse than none → no gap to recover (was 0.5)."""
    assert sgr_value(0.5, 0.4, 0.6) is None
    assert sgr_value(0.7, 0.6, 0.6) is None
    assert sgr_value(0.5, 0.8, 0.4) == pytest.approx(0.25)


def test_sgr_ci_unbounded_when_resamples_have_no_gap() -> None:
    """Issue 17 item 2: one item carries the whole hard−none gap, so about a third of the
    resamples have hard = none while easy > none (SGR = +inf): the upper bound is unbounded."""
    n = 20
    hard = [1.0] + [0.0] * (n - 1)
    easy = [1.0, 1.0, 1.0] + [0.0] * (n - 3)
    none = [0.0] * n
    res = get_analysis("sgr")(sgr_samples(easy, hard, none), [], {"resamples": 2000}, 0)
    assert res.value == pytest.approx(3.0)
    assert res.ci_high is None and res.details["ci_unbounded"] == ["high"]
    assert res.ci_low is not None and math.isfinite(res.ci_low)
