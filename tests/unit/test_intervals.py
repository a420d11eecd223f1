"""Score intervals (``harness.scoring.intervals``) against statsmodels and their own definitions,
on grids of counts that include 0 and n (issue 23)."""

from __future__ import annotations

import math
import warnings

import pytest
from scipy.optimize import brentq
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from harness.scoring.intervals import (
    Proportion,
    Term,
    clustered_proportion,
    diff_interval,
    exact_limits,
    mover_diff,
    mover_ratio,
    p_value,
    paired_diff_interval,
    proportion,
    ratio_interval,
    sum_interval,
)
from harness.scoring.stats import wilson_interval

GRID = [(x, n) for n in (1, 2, 6, 30, 300) for x in sorted({0, 1, n // 2, n - 1, n})]


def binary(x: int, n: int) -> Proportion:
    return proportion([1.0] * x + [0.0] * (n - x))


@pytest.mark.parametrize("x,n", GRID)
def test_exact_limits_are_statsmodels_clopper_pearson(x: int, n: int) -> None:
    lo, hi = exact_limits(x, n)
    slo, shi = proportion_confint(x, n, alpha=0.05, method="beta")
    assert lo == pytest.approx(float(slo), abs=1e-9) and hi == pytest.approx(float(shi), abs=1e-9)
    assert lo < hi  # never zero width


def test_mover_diff_with_wilson_limits_is_statsmodels_newcomb() -> None:
    """The MOVER composition, fed Wilson limits, is Newcombe's method 10 as statsmodels has
    it, at every pair of grid counts (0 and n included)."""
    for x1, n1 in GRID:
        for x2, n2 in GRID:
            ours = mover_diff(x1 / n1, wilson_interval(x1, n1), x2 / n2, wilson_interval(x2, n2))
            theirs = confint_proportions_2indep(x1, n1, x2, n2, compare="diff", method="newcomb")
            expected = tuple(float(t) for t in theirs)
            assert ours == pytest.approx(expected, abs=1e-9), (x1, n1, x2, n2)


def _roots(p1: float, lim1: tuple[float, float], p2: float, lim2: tuple[float, float]
           ) -> tuple[float, float]:
    """MOVER-R's limits solved numerically from its defining equations (Donner & Zou 2012)."""
    (l1, u1), (l2, u2) = lim1, lim2
    r = p1 / p2

    def lower(t: float) -> float:  # distance below the estimate minus its allowance
        return (p1 - t * p2) - math.sqrt((p1 - l1) ** 2 + t * t * (u2 - p2) ** 2)

    def upper(t: float) -> float:
        return (t * p2 - p1) - math.sqrt((u1 - p1) ** 2 + t * t * (p2 - l2) ** 2)

    lo = 0.0 if lower(0.0) <= 0 else brentq(lower, 0.0, r, xtol=1e-14)
    big = 1e9
    hi = math.inf if upper(big) <= 0 else brentq(upper, r, big, xtol=1e-14, rtol=1e-14)
    return lo, hi


def test_mover_ratio_solves_its_defining_equations() -> None:
    for x1, n1 in GRID:
        for x2, n2 in GRID:
            if x2 == 0:
                continue
            p1, p2 = x1 / n1, x2 / n2
            lim1, lim2 = exact_limits(x1, n1), exact_limits(x2, n2)
            lo, hi = mover_ratio(p1, lim1, p2, lim2)
            elo, ehi = _roots(p1, lim1, p2, lim2)
            assert lo == pytest.approx(elo, abs=1e-9), (x1, n1, x2, n2)
            assert hi == pytest.approx(ehi, rel=1e-9) or hi == ehi == math.inf
            assert lo <= p1 / p2 <= hi and lo < hi


def test_statsmodels_ratio_score_is_not_usable_at_the_boundary() -> None:
    """Why retention does not call statsmodels: its ratio score interval (0.15) collapses to
    [0.5, 0.5] at 0/300 vs 300/300, where the true ratio 0 is far below; ours holds it."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lo, hi = confint_proportions_2indep(0, 300, 300, 300, compare="ratio", method="score")
    ours = ratio_interval(binary(0, 300), binary(300, 300))
    assert not float(lo) <= 0.0 <= float(hi)
    assert ours[0] == 0.0 < ours[1] <= 0.013


def test_issue_examples() -> None:
    lo, hi = diff_interval(binary(300, 300), binary(0, 300))
    assert hi == 1.0 and lo == pytest.approx(0.9827, abs=1e-4)
    assert ratio_interval(binary(0, 300), binary(300, 300))[1] <= 0.013
    assert ratio_interval(binary(0, 6), binary(1, 6))[1] >= 1.0
    lo, hi = diff_interval(binary(1, 6), binary(0, 6))
    assert lo < 0.0 < hi


def test_no_zero_width_anywhere_on_the_grid() -> None:
    for x1, n1 in GRID:
        for x2, n2 in GRID:
            a, b = binary(x1, n1), binary(x2, n2)
            lo, hi = diff_interval(a, b)
            assert lo < hi and lo <= a.mean - b.mean <= hi
            if x2:
                lo, hi = ratio_interval(a, b)
                assert lo < hi and lo <= a.mean / b.mean <= hi
    # the denominator's lower limit at 0 leaves the ratio unbounded above
    assert ratio_interval(binary(2, 6), binary(0, 6))[1] == math.inf


def test_effective_n() -> None:
    assert binary(7, 30).n_eff == 30.0  # binary, one sample per item: the binomial case
    assert proportion([0.5, 0.25, 1.0, 0.0]).n_eff == 4.0  # partial credit: Bernoulli bound
    # 4 items × 3 templates: within [items, samples]
    p = clustered_proportion([1.0, 2.0, 0.0, 3.0], [3.0] * 4)
    assert 4.0 <= p.n_eff <= 12.0 and p.mean == 0.5
    # every item all right or all wrong (templates agree): no more than one trial per item
    assert clustered_proportion([3.0, 0.0, 3.0, 0.0], [3.0] * 4).n_eff == 4.0
    # templates independent within an item: up to one trial per sample
    assert clustered_proportion([1.0, 2.0, 1.0, 2.0], [3.0] * 4).n_eff > 4.0
    # at the boundary: the number of items (the conservative end), never zero width
    edge = clustered_proportion([0.0] * 5, [7.0] * 5)
    assert edge.n_eff == 5.0 and edge.limits()[1] > 0


def test_sum_interval_of_one_term_is_that_term() -> None:
    assert sum_interval([Term(1.0, 0.4, 0.3, 0.55)]) == pytest.approx((0.3, 0.55))
    assert sum_interval([Term(0.5, 0.4, 0.3, 0.55)]) == pytest.approx((0.15, 0.275))
    lo, hi = sum_interval([Term(0.5, 0.4, 0.3, 0.55), Term(0.5, 0.6, 0.5, 0.7)])
    assert lo == pytest.approx(0.5 - math.hypot(0.05, 0.05))
    assert hi == pytest.approx(0.5 + math.hypot(0.075, 0.05))
    # a negative weight swaps a term's sides
    assert sum_interval([Term(-1.0, 0.4, 0.3, 0.55)]) == pytest.approx((-0.55, -0.3))


def test_paired_interval_of_identical_runs_is_not_zero_width() -> None:
    a = [1.0] * 150 + [0.0] * 150
    lo, hi = paired_diff_interval(a, a, [1.0] * 300)
    u = exact_limits(0, 300)[1]
    assert (lo, hi) == pytest.approx((-u, u))
    # B right on 30 more items than A: the interval holds 0.1 and excludes 0
    b = [1.0] * 180 + [0.0] * 120
    lo, hi = paired_diff_interval(a, b, [1.0] * 300)
    assert 0.0 < lo < 0.1 < hi


def test_p_value_inverts_the_interval() -> None:
    for (x1, n1), (x2, n2) in [((30, 100), (20, 100)), ((30, 100), (15, 100)), ((6, 6), (0, 6)),
                               ((3, 6), (3, 6)), ((300, 300), (0, 300))]:
        a, b = binary(x1, n1), binary(x2, n2)
        p = p_value(lambda lv, a=a, b=b: diff_interval(a, b, lv))
        lo, hi = diff_interval(a, b)
        assert (p < 0.05) == (lo > 0 or hi < 0), (x1, n1, x2, n2, p)
        if 1e-10 < p < 0.999:  # at p the interval's end touches 0
            lo, hi = diff_interval(a, b, 1 - p)
            assert min(abs(lo), abs(hi)) < 1e-4
