"""Confidence intervals and seeds.

Everything here is deterministic: bootstrap streams come from ``numpy.random.default_rng`` seeded
with an integer from ``derive_seed`` (every seeded step of the harness derives its own stream from
its name this way), and numbers that go into result files pass through ``r10`` so float noise in
the last bits cannot change a file.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

Z95 = 1.959963984540054  # two-sided 95% normal quantile
# Bootstrap indices are drawn in chunks of at most this many numbers, so memory stays bounded
# (about 4 MB: the indices and the values they pick) whatever the item count; the draws do not
# depend on the chunk size (tested), so changing it changes no result.
_CHUNK_ELEMENTS = 1 << 18


def r10(x: float) -> float:
    """``x`` rounded to 10 decimal places; -0.0 becomes 0.0 (nan stays nan)."""
    v = round(float(x), 10)
    return 0.0 if v == 0 else v


def wilson_interval(successes: float, n: int, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``successes / n`` (successes may be fractional).

    ``(p + z²/2n ± z·sqrt(p(1−p)/n + z²/4n²)) / (1 + z²/n)``; ``n == 0`` gives ``(0.0, 1.0)``.
    """
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    if n == 0:
        return (0.0, 1.0)
    p = min(max(successes / n, 0.0), 1.0)
    z2 = z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1.0 - p) / n + z2 / (4 * n * n)) / denom
    lo = 0.0 if p == 0.0 else max(0.0, center - half)  # exact at the ends (no 0.9999999999999999)
    hi = 1.0 if p == 1.0 else min(1.0, center + half)
    return (lo, hi)


def _as_array(x: Sequence[float], name: str) -> npt.NDArray[np.float64]:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name}: need a non-empty 1-D sequence of scores")
    return arr


def _resampled_means(
    rng: np.random.Generator, x: npt.NDArray[np.float64], resamples: int
) -> npt.NDArray[np.float64]:
    """Means of ``resamples`` bootstrap resamples of ``x`` (items drawn with replacement)."""
    n = x.size
    out = np.empty(resamples, dtype=np.float64)
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        idx = rng.integers(0, n, size=(stop - start, n))
        out[start:stop] = x[idx].sum(axis=1) / n
    return out


def _bootstrap_means(
    a: Sequence[float], b: Sequence[float], seed: int, resamples: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Resampled means of ``a`` then ``b`` (independently: stratified by group) from one stream."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    xa, xb = _as_array(a, "a"), _as_array(b, "b")
    rng = np.random.default_rng(seed)
    return _resampled_means(rng, xa, resamples), _resampled_means(rng, xb, resamples)


def _percentiles(stat: npt.NDArray[np.float64], level: float) -> tuple[float, float]:
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(stat, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))


def percentile_ci(stat: npt.NDArray[np.float64], level: float = 0.95) -> tuple[float, float]:
    """Percentile interval of bootstrap statistics ``stat`` (numpy's linear quantiles), which may
    hold ±inf: a bound whose order statistics reach an infinite resample is that infinity (the
    interval is unbounded on that side), never a large finite number."""
    if stat.size == 0:
        raise ValueError("percentile_ci: no resamples")
    if bool(np.isfinite(stat).all()):
        return _percentiles(stat, level)
    _percentiles(stat[:1], level)  # checks level
    alpha = (1.0 - level) / 2.0
    ordered = np.sort(stat)
    out = []
    for q in (alpha, 1.0 - alpha):
        h = (ordered.size - 1) * q
        a, b = float(ordered[math.floor(h)]), float(ordered[math.ceil(h)])
        frac = h - math.floor(h)
        if frac == 0 or a == b:
            out.append(a)
        elif math.isinf(a) or math.isinf(b):
            out.append(a if math.isinf(a) else b)
        else:
            out.append(a + (b - a) * frac)
    return (out[0], out[1])


def ratio_ci(
    num: npt.NDArray[np.float64], den: npt.NDArray[np.float64], level: float = 0.95
) -> tuple[float, float, int]:
    """Percentile CI of ``num / den`` over paired bootstrap statistics, and how many resamples
    define it. A zero denominator under a nonzero numerator is ±inf and counts (so a bound it
    reaches is unbounded: ±inf, not a finite number from the other resamples); 0/0 is undefined
    and dropped. With more than half dropped the ratio is not estimable: ``(nan, nan, valid)``."""
    defined = ~((den == 0) & (num == 0))
    valid = int(np.count_nonzero(defined))
    if 2 * valid < num.size:
        return (math.nan, math.nan, valid)
    n, d = num[defined], den[defined]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.where(d == 0, np.copysign(np.inf, n), n / np.where(d == 0, 1.0, d))
    lo, hi = percentile_ci(r, level)
    return (lo, hi, valid)


def bootstrap_diff_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    resamples: int,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI for ``mean(a) − mean(b)``; a and b resampled independently."""
    ma, mb = _bootstrap_means(a, b, seed, resamples)
    return _percentiles(ma - mb, level)


def bootstrap_ratio_ci(
    a: Sequence[float],
    b: Sequence[float],
    *,
    seed: int,
    resamples: int,
    level: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap CI for ``mean(b) / mean(a)`` (``ratio_ci`` of the resampled means).

    A resample with ``mean(a) == 0 < mean(b)`` is +inf, so when such resamples reach the upper
    quantile the upper bound is ``inf`` (unbounded); 0/0 resamples are dropped, and with more than
    half dropped the ratio is not estimable: ``(nan, nan)``.
    """
    ma, mb = _bootstrap_means(a, b, seed, resamples)
    lo, hi, _ = ratio_ci(mb, ma, level)
    return (lo, hi)
