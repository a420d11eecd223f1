"""Score-based confidence intervals that are never falsely certain: valid at 0/n and n/n, and
never of zero width from finite data.

Every interval of a mean score in the harness treats that mean as a proportion
(:class:`Proportion`) with the exact (Clopper–Pearson) limits, and combines such limits by the
method of variance estimates recovery (MOVER):

- a **difference** of two independent means (the ID−OOD gap, two runs on different items) is
  Newcombe's hybrid interval (MOVER; Newcombe 1998) built on exact limits;
- a **ratio** (retention OOD/ID) is MOVER-R (Donner & Zou 2012) on exact limits; its upper end
  is unbounded when the denominator's lower limit is 0;
- a **weighted sum** of independent estimates (a mean over buckets, tasks or suites) is MOVER for
  linear combinations (Zou & Donner 2008): one term gives back that term's own interval.

**Which n.** Binary scores with one sample per item are exactly the binomial case: ``n_eff`` is
the number of items. Scores in [0, 1] that are not binary (partial credit), or items with several
samples (templates, conditions), are a mean of bounded units: the variance of the mean is
estimated from the items (the linearized variance of a ratio estimator, items as the unit) and
turned into the effective number of Bernoulli trials with that variance,
``n_eff = p(1−p) / var``, kept within ``[items, samples]``: a mean of [0, 1] scores varies at
most as a Bernoulli with the same mean (so never fewer than one trial per item), and is credited
with no more than one trial per sample. At p = 0 or 1 the variance says nothing, and ``n_eff`` is
the number of items (the conservative end). The limits are then the exact ones at ``p`` with
``n_eff`` trials (the beta quantiles take a fractional count), never of zero width.

**Why exact limits, not Wilson's.** With Wilson limits MOVER is Newcombe's classic hybrid score
interval, but Wilson's own coverage is 88.6% for p = 0.02 at n = 6, and the difference and ratio
inherit the dip (as low as 88.6% on the grid of docs/statistics.md). With exact limits every
difference and ratio on that grid (p in {0, 0.02, 0.5, 0.98, 1}, n in {6, 30, 100, 300} for both
roles) covers at least 95.4% (computed exactly in tests/unit/test_coverage.py), and at the
boundary they are not wider: 300/300 against 0/300 gives a gap of [98.27, 100] points (Wilson:
[98.21, 100]).

**p-values** come from inverting the same intervals (:func:`p_value`): the smallest α at which
the (1 − α) interval leaves out the null value, so a test and its interval never disagree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Limits = tuple[float, float]
LEVEL = 0.95  # confidence level of every interval unless a caller asks for another


def exact_limits(x: float, n: float, level: float = LEVEL) -> Limits:
    """Clopper–Pearson limits of a proportion ``x / n`` (``x`` may be fractional): the beta
    quantiles ``B(α/2; x, n − x + 1)`` and ``B(1 − α/2; x + 1, n − x)``, exactly 0 at x = 0
    and 1 at x = n."""
    from scipy.stats import beta  # noqa: PLC0415 (scipy loads only when intervals are made)

    if n <= 0:
        return (0.0, 1.0)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    x = min(max(x, 0.0), n)
    a = (1.0 - level) / 2.0
    lo = 0.0 if x <= 0 else float(beta.ppf(a, x, n - x + 1.0))
    hi = 1.0 if x >= n else float(beta.ppf(1.0 - a, x + 1.0, n - x))
    return (lo, hi)


@dataclass(frozen=True)
class Proportion:
    """A mean score in [0, 1] seen as a proportion, with the number of Bernoulli trials whose
    variance it has (see module)."""

    mean: float  # the estimate: mean over every sample
    n: int  # items (the independent units)
    n_eff: float  # effective Bernoulli trials: items for binary one-sample items

    def limits(self, level: float = LEVEL) -> Limits:
        """The exact limits at ``mean`` with ``n_eff`` trials."""
        return exact_limits(self.mean * self.n_eff, self.n_eff, level)


def clustered_proportion(sums: Sequence[float], counts: Sequence[float]) -> Proportion:
    """A proportion from items with ``counts[i]`` samples whose scores sum to ``sums[i]``."""
    n = len(sums)
    if n == 0 or len(counts) != n:
        raise ValueError("clustered_proportion: need one (sum, count) per item, at least one item")
    total = math.fsum(counts)
    p = min(max(math.fsum(sums) / total, 0.0), 1.0)
    if p in (0.0, 1.0):
        return Proportion(p, n, float(n))
    var = math.fsum((s - p * c) ** 2 for s, c in zip(sums, counts, strict=True)) / total**2
    n_eff = p * (1.0 - p) / var if var > 0 else total
    return Proportion(p, n, min(max(n_eff, float(n)), total))


def proportion(scores: Sequence[float]) -> Proportion:
    """A proportion from one score per item (binary scores: exactly the binomial case)."""
    return clustered_proportion(scores, [1.0] * len(scores))


def diff_interval(a: Proportion, b: Proportion, level: float = LEVEL) -> Limits:
    """Newcombe's hybrid (MOVER) interval for ``a.mean − b.mean`` (independent samples)."""
    return mover_diff(a.mean, a.limits(level), b.mean, b.limits(level))


def mover_diff(p1: float, lim1: Limits, p2: float, lim2: Limits) -> Limits:
    """MOVER for ``p1 − p2`` from each estimate's limits: with Wilson limits this is Newcombe's
    method 10 (statsmodels' ``method="newcomb"``, checked in the tests)."""
    (l1, u1), (l2, u2) = lim1, lim2
    d = p1 - p2
    return (d - math.hypot(p1 - l1, u2 - p2), d + math.hypot(u1 - p1, p2 - l2))


def ratio_interval(num: Proportion, den: Proportion, level: float = LEVEL) -> Limits:
    """MOVER-R interval for ``num.mean / den.mean`` (independent samples).

    The lower end solves ``(p1 − θ·p2)² = (p1 − l1)² + θ²(u2 − p2)²`` below the estimate, the
    upper ``(θ·p2 − p1)² = (u1 − p1)² + θ²(p2 − l2)²`` above it (Donner & Zou 2012); both are
    written in the form without a division by a coefficient that can vanish. The upper end is
    ``inf`` when no root bounds it (the denominator's lower limit is 0)."""
    return mover_ratio(num.mean, num.limits(level), den.mean, den.limits(level))


def mover_ratio(p1: float, lim1: Limits, p2: float, lim2: Limits) -> Limits:
    """MOVER-R for ``p1 / p2`` from each estimate's limits (see ``ratio_interval``)."""
    (l1, u1), (l2, u2) = lim1, lim2
    a = p1 * p2
    # lower: a_l·θ² − 2·a·θ + c_l = 0 with a_l = u2(2p2 − u2), c_l = l1(2p1 − l1)
    c_low = l1 * (2.0 * p1 - l1)
    disc = a * a - u2 * (2.0 * p2 - u2) * c_low
    low = 0.0 if c_low <= 0 or disc < 0 else c_low / (a + math.sqrt(disc))
    # upper: b_u·θ² − 2·a·θ + c_u = 0 with b_u = l2(2p2 − l2) ≥ 0, c_u = u1(2p1 − u1)
    b_up = l2 * (2.0 * p2 - l2)
    c_up = u1 * (2.0 * p1 - u1)
    disc = a * a - b_up * c_up
    high = math.inf if b_up <= 0 or disc < 0 else (a + math.sqrt(disc)) / b_up
    return (max(0.0, low), high)


@dataclass(frozen=True)
class Term:
    """One independent estimate in a weighted sum, with its interval."""

    weight: float  # its weight in the sum
    value: float  # its estimate
    low: float  # its lower limit
    high: float  # its upper limit


def sum_interval(terms: Sequence[Term]) -> Limits:
    """MOVER interval of ``Σ weight·value`` over independent terms: the sum of the estimates,
    minus (plus) the root of the summed squared distances to each term's limit on that side (a
    negative weight swaps a term's sides). One term gives back its own interval, scaled."""
    if not terms:
        raise ValueError("sum_interval: no terms")
    est = math.fsum(t.weight * t.value for t in terms)
    down = math.fsum((t.weight * ((t.value - t.low) if t.weight >= 0 else (t.high - t.value)))
                     ** 2 for t in terms)
    up = math.fsum((t.weight * ((t.high - t.value) if t.weight >= 0 else (t.value - t.low)))
                   ** 2 for t in terms)
    return (est - math.sqrt(down), est + math.sqrt(up))


_P_MIN = 1e-12  # p-values below this are reported as this bound's side: 0


def reach(estimate: float | None, low: float | None, high: float | None) -> float | None:
    """How far an interval reaches from its estimate: the farther end,
    ``max(estimate − low, high − estimate)``. A precision target of ±H (``--target-ci``, a
    board's stated precision; docs/statistics.md) asks this to be at most H. None without an
    estimate (no samples)."""
    if estimate is None or low is None or high is None:
        return None
    return max(estimate - low, high - estimate)


def p_value(interval_at: Callable[[float], Limits], null: float = 0.0) -> float:
    """p-value of ``null`` by inverting a family of intervals ``interval_at(level)`` (nested in
    the level): the smallest α whose (1 − α) interval leaves ``null`` out, found by bisection
    on log α (to a relative 1e-6). 1 when even the narrowest interval holds it; 0 when the
    (1 − 1e-12) interval leaves it out."""

    def out(alpha: float) -> bool:
        lo, hi = interval_at(1.0 - alpha)
        return null < lo or null > hi

    if not out(1.0 - 1e-9):
        return 1.0
    if out(_P_MIN):
        return 0.0
    lo, hi = math.log(_P_MIN), math.log(1.0 - 1e-9)  # out(e^hi), not out(e^lo)
    while hi - lo > 1e-6:
        mid = (lo + hi) / 2.0
        lo, hi = (lo, mid) if out(math.exp(mid)) else (mid, hi)
    return math.exp(hi)


def paired_diff_interval(a: Sequence[float], b: Sequence[float], counts: Sequence[float],
                         level: float = LEVEL) -> Limits:
    """Interval of ``mean(b) − mean(a)`` over the same items (``a[i]``, ``b[i]``: item i's mean
    score in each run over its ``counts[i]`` samples). The difference splits into the share
    where B is ahead, ``P⁺`` (item differences ``max(b − a, 0)``), minus the share where A is,
    ``P⁻``; each is a proportion with its score interval, and MOVER joins them with their
    correlation (never positive: an item is ahead one way at most), so items where the runs
    agree narrow the interval without ever closing it: two identical runs of n binary items get
    ±(the exact upper limit of 0/n), not [0, 0]."""
    n = len(a)
    if n == 0 or len(b) != n or len(counts) != n:
        raise ValueError("paired_diff_interval: need one (a, b, count) per item")
    plus = [max(y - x, 0.0) for x, y in zip(a, b, strict=True)]
    minus = [max(x - y, 0.0) for x, y in zip(a, b, strict=True)]
    pp = clustered_proportion([c * d for c, d in zip(counts, plus, strict=True)], counts)
    pm = clustered_proportion([c * d for c, d in zip(counts, minus, strict=True)], counts)
    lp, up = pp.limits(level)
    lm, um = pm.limits(level)
    rho = _correlation(plus, minus)
    d = pp.mean - pm.mean
    down = (pp.mean - lp) ** 2 + (um - pm.mean) ** 2 - 2 * rho * (pp.mean - lp) * (um - pm.mean)
    up_ = (up - pp.mean) ** 2 + (pm.mean - lm) ** 2 - 2 * rho * (up - pp.mean) * (pm.mean - lm)
    return (d - math.sqrt(max(down, 0.0)), d + math.sqrt(max(up_, 0.0)))


def _correlation(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson correlation of two columns; 0 where either is constant."""
    n = len(x)
    mx, my = math.fsum(x) / n, math.fsum(y) / n
    sxy = math.fsum((u - mx) * (v - my) for u, v in zip(x, y, strict=True))
    sxx = math.fsum((u - mx) ** 2 for u in x)
    syy = math.fsum((v - my) ** 2 for v in y)
    return 0.0 if sxx == 0 or syy == 0 else max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))
