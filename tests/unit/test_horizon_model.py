"""The horizon's curve model (issue 49): the beta-binomial batch likelihood is the exact one,
answers that vary more than a binomial allows widen the interval, the leaning shapes keep d50 at
the halfway point, partial credit still works, and the check round flags a fall that recovers
while it leaves a single fall alone."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import betabinom, binom

from harness.scoring.horizon import HorizonSearch, run_search
from harness.scoring.horizon_fit import MISFIT_P, check_plan, held_out_p, unchecked
from harness.scoring.horizon_model import RHO, SHAPES, Grid, fitted_accuracy, survival


def test_the_batch_likelihood_is_the_exact_beta_binomial() -> None:
    g = Grid(1, 64, 0.1)
    k, n, d = 7, 12, 9.0
    ll = g.loglik(d, k, n)
    p = g.accuracy(d)
    rng = np.random.default_rng(0)
    for _ in range(200):
        i = tuple(int(rng.integers(s)) for s in p.shape)
        coef = math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
        for r, rho in enumerate(RHO):
            exact = (binom.logpmf(k, n, p[i]) if rho == 0 else
                     betabinom.logpmf(k, n, p[i] * (1 / rho - 1), (1 - p[i]) * (1 / rho - 1)))
            assert ll[(r,) + i] + coef == pytest.approx(exact, abs=2e-3)


def test_every_shape_is_halfway_at_d50_and_falls() -> None:
    z = np.linspace(-4, 4, 81)
    slope0 = None
    for k in range(len(SHAPES)):
        s = survival(k, z)
        assert s[40] == pytest.approx(0.5) and np.all(np.diff(s) <= 1e-12) and s[0] > s[-1]
        slope = (survival(k, np.array([1e-4]))[0] - survival(k, np.array([-1e-4]))[0]) / 2e-4
        slope0 = slope if slope0 is None else slope0
        assert slope == pytest.approx(slope0, rel=1e-3)
    assert fitted_accuracy(20, 20, 0.3, 0.9, 0.1, [0.2, 0.5, 0.3]) == pytest.approx(0.5)


def _search(batches: list[tuple[int, float, int]]) -> HorizonSearch:
    s = HorizonSearch(1, 128, 0.0, edge=8)
    for d in (2, 5, 8):
        s.add(d, 95, 100)
    for d, c, n in batches:
        s.add(d, c, n)
    return s


def test_answers_that_vary_more_than_a_binomial_widen_the_interval() -> None:
    """The same pooled counts, once as steady batches and once as batches that swing between
    all right and all wrong: the swinging ones are read as correlated and the interval widens."""
    steady, swinging = [], []
    for d, acc in ((12, 0.9), (16, 0.7), (20, 0.5), (26, 0.3), (34, 0.1)):
        for j in range(4):
            steady.append((d, acc * 10, 10))
            swinging.append((d, 10.0 if j < round(acc * 4) else 0.0, 10))
    a, b = _search(steady).estimate(), _search(swinging).estimate()
    assert a.status == b.status == "measured"
    assert a.log_width is not None and b.log_width is not None
    assert b.overdispersion > 3 * a.overdispersion and b.log_width > 1.3 * a.log_width


def test_partial_credit_counts_are_used_as_they_are() -> None:
    est = _search([(16, 6.5, 10), (20, 4.25, 10), (26, 1.75, 10)]).estimate()
    assert est.status == "measured" and est.d50 is not None and 12 < est.d50 < 40


def test_the_check_goes_to_the_widest_gaps_past_the_id_edge() -> None:
    cands = [1, 2, 3, 4, 5, 7, 9, 11, 15, 20, 26, 34, 45, 58, 77, 101]
    # gaps from the ID edge 8 to d50 60: 8..45 (the middle, 19, is nearest the candidate 20),
    # 45..58 and 58..60 (no untried candidate inside): one point gets the whole round
    assert check_plan(cands, [2.0, 5.0, 8.0, 45.0, 58.0, 77.0], 8.0, 60.0, 30) == [(20, 30)]
    # three gaps with room: three points of 10, smallest difficulty first
    tried = [2.0, 5.0, 8.0, 20.0, 45.0, 101.0]
    assert check_plan(cands, tried, 8.0, 100.0, 30) == [(11, 10), (34, 10), (77, 10)]
    # a fall inside the ID range looks below the edge instead
    assert check_plan(cands, [1.0, 2.0, 8.0], 8.0, 5.0, 20) == [(3, 20)]
    assert check_plan(cands, [2.0, 5.0, 8.0, 9.0, 11.0], 8.0, 10.0, 30) == []


def _searched() -> HorizonSearch:
    """A search whose rounds went where a fall at about 60 is: all right up to 55, none from 68."""
    s = HorizonSearch(1, 128, 0.0, edge=8)
    for d in (2, 5, 8):
        s.add(d, 95, 100)
    for _ in range(3):
        s.add_round([(45, 19, 20), (55, 18, 20), (68, 1, 20), (84, 0, 20)])
    return s


@pytest.mark.parametrize(("right", "status"), [(0.95, "measured"), (0.0, "misfit")])
def test_the_check_round_flags_a_dip_the_search_skipped(right: float, status: str) -> None:
    """The check round goes into the stretch between the ID edge and the fall; answers there
    at the easy-item level leave the d50 alone, answers at the floor make it a misfit."""
    s = _searched()
    plan = s.check_round(30)
    assert plan and all(8 < d < 45 for d, _ in plan) and sum(n for _, n in plan) == 30
    s.add_round([(d, round(n * right), n) for d, n in plan], check=True)
    est = s.verdict()
    assert est.status == status and s.check_items == 30 and est.fit_p is not None
    assert (est.fit_p < MISFIT_P) == (status == "misfit")
    assert (est.d50 is None) == (status == "misfit")
    if status == "misfit":  # the tried accuracies it reports show the dip
        assert any(8 < d < 45 and c == 0 for d, c, _ in est.tried)


def test_a_search_of_a_single_fall_ends_with_its_check_round() -> None:
    def answer(plan: list[tuple[int, int]]) -> list[tuple[int, float, int]]:
        return [(d, float(round(n * (0.95 if d < 40 else 0.0))), n) for d, n in plan]

    s = HorizonSearch(1, 128, 0.0, edge=8)
    for d in (2, 5, 8):
        s.add(d, 95, 100)
    est = run_search(s, answer, 200, 40, math.log(2.0))
    assert est.status == "measured" and s.check_items == 30 and est.fit_p is not None
    assert est.lower is not None and est.upper is not None and est.lower <= 40 <= est.upper
    small = HorizonSearch(1, 128, 0.0, edge=8)
    for d in (2, 5, 8):
        small.add(d, 8, 8)
    run_search(small, answer, 20, 20, math.log(2.0))
    assert small.check_items == 0  # a search of 20 answers keeps them all for the fit


def _sampled_dip() -> HorizonSearch:
    """A search that itself sampled a dip (26: 3 of 10, where the fall at about 100 leaves the
    model at its easy-item level) and then spent its rounds on the fall."""
    s = HorizonSearch(1, 512, 0.0, edge=8)
    for d in (2, 5, 8):
        s.add(d, 90, 100)
    for rnd in ([(227, 0, 10), (173, 0, 10), (298, 0, 10), (132, 1, 10)],
                [(34, 5, 10), (45, 8, 10), (26, 3, 10), (58, 9, 10)],
                [(101, 4, 10), (77, 8, 10), (132, 1, 10), (58, 9, 10)],
                [(101, 5, 10), (132, 1, 10), (77, 7, 10), (173, 0, 10)]):
        s.add_round(rnd)
    return s


def test_the_check_is_fitted_without_the_ends_of_the_gaps_it_checks() -> None:
    """The check's predictive leaves out the tried difficulties just below and above each
    check point past the ID edge: here the search's dip batch (26), not the ID batch at the
    edge nor the fall's batches; a check spread over the whole tried range keeps the batches
    between its gaps."""
    s = _sampled_dip()
    plan = s.check_round(30)
    assert plan == [(15, 30)]
    kept = unchecked(s.batches, 8.0, [15.0])
    assert {d for d, _, _ in s.batches} - {d for d, _, _ in kept} == {26.0}
    assert unchecked(s.batches, 8.0, [1000.0]) == [b for b in s.batches if b[0] != 298]
    assert unchecked(s.batches, 300.0, [400.0]) == s.batches
    cut = {d for d, _, _ in s.batches} - {d for d, _, _ in unchecked(s.batches, 8.0,
                                                                     [30.0, 90.0, 200.0])}
    assert cut == {26.0, 34.0, 77.0, 101.0, 173.0, 227.0}


def test_a_dip_the_search_sampled_is_not_read_as_correlated_batches() -> None:
    """Fresh answers in the dip (12 of 30 at 15) would pass against the whole posterior, whose
    ρ has grown to explain the dip batch; against the posterior without it they are a misfit.
    Answers at the easy-item level there stay measured."""
    s = _sampled_dip()
    dip = [(15, 12, 30)]
    assert held_out_p(s.grid, s.posterior(), dip) > MISFIT_P  # the old check: passes
    s.add_round(dip, check=True)
    est = s.verdict()
    assert est.status == "misfit" and est.fit_p is not None and est.fit_p < MISFIT_P
    level = _sampled_dip()
    level.add_round([(15, 27, 30)], check=True)
    assert level.verdict().status == "measured"
