"""Wilson intervals, seeded bootstrap CIs, seed derivation and rounding."""

from __future__ import annotations

import hashlib
import math
import time

import numpy as np
import pytest

from harness.scoring.stats import (
    bootstrap_means,
    percentile_ci,
    r10,
    ratio_ci,
    wilson_interval,
)
from harness.seeding import derive_seed


def test_wilson_8_of_10_by_hand() -> None:
    # p = 0.8, n = 10, z = 1.959964, z² = 3.841459
    # denom  = 1 + z²/n                    = 1.3841459
    # center = (p + z²/2n) / denom         = (0.8 + 0.1920729) / 1.3841459 = 0.7167432
    # half   = z·sqrt(p(1−p)/n + z²/4n²) / denom
    #        = 1.959964·sqrt(0.016 + 0.0096036) / 1.3841459
    #        = 1.959964·0.1600113 / 1.3841459  = 0.2265814
    # → (0.4901618, 0.9433246)
    lo, hi = wilson_interval(8, 10)
    assert round(lo, 4) == 0.4902
    assert round(hi, 4) == 0.9433


def test_wilson_edges() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)
    lo, hi = wilson_interval(0, 10)
    assert lo == 0.0 and 0.0 < hi < 0.35  # z²/(n+z²) = 3.8415/13.8415 = 0.2775
    assert round(hi, 4) == 0.2775
    lo, hi = wilson_interval(10, 10)
    assert round(lo, 4) == 0.7225 and hi == 1.0
    lo, hi = wilson_interval(2.5, 5)  # fractional successes (partial credit)
    assert lo < 0.5 < hi
    assert wilson_interval(50, 100)[1] - wilson_interval(50, 100)[0] > (
        wilson_interval(500, 1000)[1] - wilson_interval(500, 1000)[0]
    )
    with pytest.raises(ValueError):
        wilson_interval(1, -1)


def test_derive_seed() -> None:
    want = int.from_bytes(hashlib.sha256(b"7\x1fadd\x1fplain\x1fgaps").digest()[:8], "big")
    assert derive_seed(7, "add", "plain", "gaps") == want
    assert derive_seed(7, "add") != derive_seed(7, "ad", "d")  # the separator matters
    assert 0 <= derive_seed() < 2**64
    assert derive_seed("x") == derive_seed("x")


def test_r10() -> None:
    assert r10(0.1 + 0.2) == 0.3
    assert r10(1 / 3) == 0.3333333333
    assert math.copysign(1.0, r10(-1e-15)) == 1.0  # no negative zero in result files
    assert math.isnan(r10(math.nan))


def bootstrap_diff_ci(a: list[float], b: list[float], *, seed: int, resamples: int,
                      level: float = 0.95) -> tuple[float, float]:
    """The ID−OOD gap's interval as a gap report draws it (``scoring.gaps.id_ood_gap``)."""
    ma, mb = bootstrap_means(a, b, seed=seed, resamples=resamples)
    return percentile_ci(ma - mb, level)


def bootstrap_ratio_ci(a: list[float], b: list[float], *, seed: int,
                       resamples: int) -> tuple[float, float]:
    """The retention's interval, mean(b) / mean(a), as a gap report draws it."""
    ma, mb = bootstrap_means(a, b, seed=seed, resamples=resamples)
    lo, hi, _ = ratio_ci(mb, ma)
    return (lo, hi)


def _binary(n: int, p: float, seed: int) -> list[float]:
    rng = np.random.default_rng(seed)
    return [float(x) for x in (rng.random(n) < p)]


def test_diff_ci_contains_estimate_and_shrinks() -> None:
    widths = []
    for n in (50, 500, 5000):
        a, b = _binary(n, 0.8, 1), _binary(n, 0.4, 2)
        est = sum(a) / n - sum(b) / n
        lo, hi = bootstrap_diff_ci(a, b, seed=3, resamples=1000)
        assert lo < est < hi
        widths.append(hi - lo)
    assert widths[0] > widths[1] > widths[2]
    # the 95% CI width of a difference of proportions ≈ 2·1.96·sqrt(.16/n + .24/n)
    assert widths[2] == pytest.approx(2 * 1.96 * math.sqrt(0.4 / 5000), rel=0.15)


def test_diff_ci_seeded() -> None:
    a, b = _binary(300, 0.7, 1), _binary(200, 0.5, 2)
    first = bootstrap_diff_ci(a, b, seed=11, resamples=500)
    assert bootstrap_diff_ci(a, b, seed=11, resamples=500) == first
    assert bootstrap_diff_ci(a, b, seed=12, resamples=500) != first
    assert bootstrap_diff_ci(a, b, seed=11, resamples=500, level=0.5) != first


def test_diff_ci_degenerate() -> None:
    assert bootstrap_diff_ci([1.0] * 5, [0.0] * 7, seed=0, resamples=100) == (1.0, 1.0)
    with pytest.raises(ValueError):
        bootstrap_diff_ci([], [1.0], seed=0, resamples=100)
    with pytest.raises(ValueError):
        bootstrap_diff_ci([1.0], [1.0], seed=0, resamples=100, level=1.0)


def test_diff_ci_fast_for_large_inputs() -> None:
    a, b = _binary(10_000, 0.9, 1), _binary(10_000, 0.6, 2)
    t0 = time.perf_counter()
    lo, hi = bootstrap_diff_ci(a, b, seed=0, resamples=1000)
    assert time.perf_counter() - t0 < 10.0  # well under a second on a laptop
    assert lo < sum(a) / 1e4 - sum(b) / 1e4 < hi


def test_ratio_ci() -> None:
    a, b = _binary(400, 0.8, 1), _binary(400, 0.4, 2)
    est = (sum(b) / 400) / (sum(a) / 400)
    lo, hi = bootstrap_ratio_ci(a, b, seed=5, resamples=1000)
    assert lo < est < hi
    assert bootstrap_ratio_ci(a, b, seed=5, resamples=1000) == (lo, hi)
    assert bootstrap_ratio_ci(a, b, seed=6, resamples=1000) != (lo, hi)
    assert bootstrap_ratio_ci([1.0] * 9, [0.5] * 4, seed=5, resamples=100) == (0.5, 0.5)


def test_ratio_ci_zero_denominator() -> None:
    # every resample 1/0: the ratio is +inf throughout, never a finite number
    assert bootstrap_ratio_ci([0.0] * 20, [1.0] * 20, seed=0, resamples=200) == (math.inf,
                                                                                 math.inf)
    # one success in 20: P(resample has none) = (19/20)^20 ≈ 0.36 of resamples are 0.5/0 = +inf,
    # past the 97.5% point: the upper end is unbounded, the lower end finite
    lo, hi = bootstrap_ratio_ci([1.0] + [0.0] * 19, [0.5] * 20, seed=0, resamples=400)
    assert math.isfinite(lo) and lo <= 10.0 and hi == math.inf
    # 0/0 in every resample: undefined, dropped, so not estimable
    lo, hi = bootstrap_ratio_ci([0.0] * 5, [0.0] * 5, seed=0, resamples=100)
    assert math.isnan(lo) and math.isnan(hi)
