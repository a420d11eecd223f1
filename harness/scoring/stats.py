"""Confidence intervals and seeds.

Everything here is deterministic: bootstrap streams come from ``numpy.random.default_rng`` seeded
with an integer from ``derive_seed`` (every seeded step of the harness derives its own stream from
its name this way), and numbers that go into result files pass through ``r10`` so float noise in
the last bits cannot change a file.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence

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


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
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


IntRows = npt.NDArray[np.int64]


def resample_rows(
    rng: np.random.Generator, n: int, resamples: int
) -> Iterator[tuple[slice, IntRows]]:
    """The index rows of ``resamples`` bootstrap resamples of ``n`` items (drawn with
    replacement), in chunks: ``(rows, idx)`` with ``idx[k]`` the items of resample
    ``rows.start + k``. Every bootstrap of the harness draws through here: the draws are those of
    one ``rng.integers(0, n, size=(resamples, n))`` call, whatever the chunk size."""
    if n < 1:
        raise ValueError("resample_rows: no items")
    rows = max(1, _CHUNK_ELEMENTS // n)
    for start in range(0, resamples, rows):
        stop = min(resamples, start + rows)
        yield slice(start, stop), rng.integers(0, n, size=(stop - start, n))


def resampled_sums(
    rng: np.random.Generator, columns: Sequence[npt.NDArray[np.float64]], resamples: int
) -> list[npt.NDArray[np.float64]]:
    """Per resample, each column's sum over one with-replacement draw of the rows (the same
    draw for every column: a paired bootstrap over items)."""
    out = [np.empty(resamples, dtype=np.float64) for _ in columns]
    for rows, idx in resample_rows(rng, columns[0].size, resamples):
        for o, col in zip(out, columns, strict=True):
            o[rows] = col[idx].sum(axis=1)
    return out


def resampled_means(
    rng: np.random.Generator, x: npt.NDArray[np.float64], resamples: int
) -> npt.NDArray[np.float64]:
    """Means of ``resamples`` bootstrap resamples of ``x`` (items drawn with replacement)."""
    (sums,) = resampled_sums(rng, [x], resamples)
    mean: npt.NDArray[np.float64] = sums / x.size
    return mean


def bootstrap_means(
    a: Sequence[float], b: Sequence[float], *, seed: int, resamples: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Resampled means of ``a`` then ``b`` (independently: stratified by group) from one stream.
    A gap report draws them once and every gap reads them: ``percentile_ci`` of their difference
    is the ID−OOD gap's interval, ``ratio_ci`` of ``b`` over ``a`` the retention's."""
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples}")
    xa, xb = _as_array(a, "a"), _as_array(b, "b")
    rng = np.random.default_rng(seed)
    return resampled_means(rng, xa, resamples), resampled_means(rng, xb, resamples)


# The 2.5% and 97.5% quantiles written out: (1 − 0.95) / 2 is 0.025000000000000022 in floating
# point, so analyses whose numbers were fixed with these literals pass them as ``quantiles``.
Q95 = (0.025, 0.975)


def _tails(level: float, quantiles: tuple[float, float] | None) -> tuple[float, float]:
    if quantiles is not None:
        return quantiles
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    alpha = (1.0 - level) / 2.0
    return (alpha, 1.0 - alpha)


def percentile_ci(
    stat: npt.NDArray[np.float64], level: float = 0.95, *,
    quantiles: tuple[float, float] | None = None,
) -> tuple[float, float]:
    """Percentile interval of bootstrap statistics ``stat`` (numpy's linear quantiles
    ``(1 − level)/2`` and ``1 − (1 − level)/2``, or the two ``quantiles`` given), which may
    hold ±inf: a bound whose order statistics reach an infinite resample is that infinity (the
    interval is unbounded on that side), never a large finite number. The one percentile-CI
    reader of the harness: gaps, analyses, leaderboard and compare all read theirs here."""
    if stat.size == 0:
        raise ValueError("percentile_ci: no resamples")
    tails = _tails(level, quantiles)
    if bool(np.isfinite(stat).all()):
        lo, hi = np.quantile(stat, list(tails))
        return (float(lo), float(hi))
    ordered = np.sort(stat)
    out = []
    for q in tails:
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

