"""The horizon d50: where accuracy falls halfway from the model's ID level to the item baseline.

The curve is a psychometric function of log difficulty,

    p(d) = γ + (1 − γ − λ) · Φ((−ln d − μ) / σ),

with γ the **item baseline** (the best constant answer of the items, ``scoring/baselines``; fixed,
not fitted), 1 − λ the model's accuracy on easy items (its ID level), μ = −ln d50 and σ the
spread in natural-log units. At d = d50 the accuracy is exactly halfway between 1 − λ and γ.

**Design and fit.** QUEST+ (Watson 2017; the ``questplus`` package) keeps the posterior over a
grid of (μ, σ, λ) with flat priors and, after each round, ranks the candidate difficulties by the
entropy the posterior is expected to have after one more answer there. A round puts its items
on the ``points`` best-ranked difficulties (``next_round``), so a batched backend gets many
prompts at once. The estimate is the posterior's median of d50 with the central 95% credible
interval of its marginal (``estimate``); the simulation in ``tests/unit/test_horizon_coverage.py``
and ``bench/horizon_sim.py`` measures how often that interval covers the true d50.

**Why not psignifit for the fit.** psignifit 4.3 (Schütt et al. 2016) bounds the lapse rate to
(0, 0.5) under a Beta(1, 10) prior, made for observers who rarely lapse. A model whose easy-item
accuracy is 80% has λ = 0.2: on 20 simulated data sets (d50 = 20, top 0.8, 11 levels × 20 items)
its fitted λ was 0 each time and its 95% interval held the true d50 0 times of 20, at about 1.5 s
a fit; a flat lapse prior made its optimiser return λ < 0. The QUEST+ grid posterior has no such
prior and costs milliseconds.

**Censoring.** A model still above the midpoint at the largest difficulty tried gets "≥ max"
(``status="above"``), never a number; one already below it at the smallest gets "≤ min"
(``"below"``); one whose ID level is not above the baseline has no fall to place (``"floor"``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Status = Literal["measured", "above", "below", "floor"]
LEVEL = 0.95  # credible level of the d50 interval
STOP_LEVEL = 0.99  # the interval whose width decides an early stop (wider than the one shown)
CANDIDATES = 24  # difficulties the search may choose from (log-spaced, distinct integers)
MARGIN = math.log(4.0)  # the μ grid reaches this far past each end of the range (ln units)
MU_STEPS, SIGMA_STEPS, LAPSE_STEPS = 160, 16, 24  # the posterior grid
SIGMA_RANGE = (0.05, 3.0)  # spread σ in ln-difficulty units: a near step to a very slow fall
CORRECT, WRONG = "Correct", "Incorrect"


def candidate_difficulties(lo: int, hi: int, n: int = CANDIDATES) -> list[int]:
    """Up to ``n`` distinct integers from ``lo`` to ``hi`` (both included), evenly spaced in
    log difficulty."""
    if lo < 1 or hi < lo:
        raise ValueError(f"a search range needs 1 <= lo <= hi, got {lo}..{hi}")
    if hi == lo:
        return [lo]
    step = (math.log(hi) - math.log(lo)) / (n - 1)
    return sorted({round(math.exp(math.log(lo) + i * step)) for i in range(n)} | {lo, hi})


@dataclass(frozen=True)
class Estimate:
    """The horizon of one task and template: d50 with its interval, or why there is none."""

    status: Status  # measured, above ("≥ max"), below ("≤ min") or floor (no fall to place)
    d50: float | None  # posterior median of d50 (measured only)
    lower: float | None  # 95% credible limits of d50 (measured only; upper None: past the range)
    upper: float | None
    range_lo: int  # smallest difficulty the search could try
    range_hi: int  # largest difficulty it could try (the spec's, or where the context ends)
    top: float  # posterior mean of the easy-item accuracy 1 − λ
    spread: float  # σ, geometric posterior mean: the fall's width in ln-difficulty units
    baseline: float  # γ, the item baseline the fall is measured down to
    items: int  # answers the estimate rests on (search items and the ID items it was given)
    log_width: float | None  # width of the interval in ln units (None when open or censored)


def _grid(lo: int, hi: int, baseline: float) -> dict[str, Any]:
    import numpy as np

    mu = np.linspace(-math.log(hi) - MARGIN, -math.log(lo) + MARGIN, MU_STEPS)
    sigma = np.geomspace(*SIGMA_RANGE, SIGMA_STEPS)
    room = 1.0 - baseline  # λ from 0 (top 1) to all the room above the baseline (top = γ)
    lapse = np.linspace(0.0, room * (1 - 1e-3), LAPSE_STEPS)
    return {"mean": mu, "sd": sigma, "lower_asymptote": np.array([baseline]),
            "lapse_rate": lapse}


class HorizonSearch:
    """A QUEST+ search for d50 over ``lo..hi`` with the item baseline ``baseline``."""

    def __init__(self, lo: int, hi: int, baseline: float) -> None:
        import numpy as np

        try:
            from questplus import QuestPlus
        except ImportError:
            from harness.errors import HarnessError

            raise HarnessError("--horizon needs the questplus package: pip install "
                               "'genharness[horizons]'") from None

        self.lo, self.hi = lo, hi
        self.baseline = min(max(float(baseline), 0.0), 0.98)
        self.difficulties = candidate_difficulties(lo, hi)
        intensity = -np.log(np.array(self.difficulties, dtype=float))
        self._qp = QuestPlus(
            stim_domain={"intensity": intensity}, param_domain=_grid(lo, hi, self.baseline),
            outcome_domain={"response": [CORRECT, WRONG]}, func="norm_cdf", stim_scale="linear",
            stim_selection_method="min_entropy", param_estimation_method="mean")
        self._logpost = np.log(self._qp.posterior.values)  # kept in logs: no underflow
        self.items = 0
        self.tried: dict[int, tuple[float, int]] = {}  # difficulty → (correct, answered)

    def add(self, d: float, correct: float, n: int) -> None:
        """Answers at difficulty ``d``: ``correct`` of ``n`` right (a fractional ``correct``
        from partial-credit scores is used as is)."""
        import numpy as np

        if n <= 0:
            return
        like = self._likelihood(-math.log(float(d)))
        with np.errstate(divide="ignore"):
            self._logpost = (self._logpost + correct * np.log(like)
                             + (n - correct) * np.log1p(-like))
        self._sync()
        self.items += n
        c, m = self.tried.get(int(d), (0.0, 0))
        self.tried[int(d)] = (c + correct, m + n)

    def _likelihood(self, x: float) -> npt.NDArray[np.float64]:
        """P(correct | parameters) at intensity ``x`` over the grid (params' shape)."""
        import numpy as np
        from scipy.stats import norm

        g = self._qp.param_domain
        mu = g["mean"][:, None, None, None]
        sd = g["sd"][None, :, None, None]
        gam = g["lower_asymptote"][None, None, :, None]
        lap = g["lapse_rate"][None, None, None, :]
        p = gam + (1 - gam - lap) * norm.cdf((x - mu) / sd)
        return np.clip(p, 1e-9, 1 - 1e-9)  # type: ignore[no-any-return]

    def _sync(self) -> None:
        import numpy as np

        post = np.exp(self._logpost - self._logpost.max())
        self._qp.posterior.values[...] = post / post.sum()

    def next_round(self, items: int, points: int = 4) -> list[tuple[int, int]]:
        """Where the next ``items`` answers go: the ``points`` candidate difficulties with the
        lowest expected posterior entropy after one answer (QUEST+'s own ranking), the items
        split evenly between them, the best-ranked getting any remainder."""
        ranked = self._ranked()
        chosen = ranked[: max(1, min(points, len(ranked), items))]
        base, extra = divmod(items, len(chosen))
        return [(d, base + (i < extra)) for i, d in enumerate(chosen) if base + (i < extra)]

    def _ranked(self) -> list[int]:
        """Candidates from the most to the least informative (ties: the smaller difficulty)."""
        import numpy as np

        post = self._qp.posterior.values
        scores = []
        for d in self.difficulties:
            p = self._likelihood(-math.log(d))
            h = 0.0
            for like in (p, 1 - p):
                joint = post * like
                mass = float(joint.sum())
                if mass <= 0:
                    continue
                q = joint / mass
                with np.errstate(divide="ignore", invalid="ignore"):
                    h += mass * float(-np.nansum(q * np.log(q)))
            scores.append(h)
        order = sorted(range(len(self.difficulties)), key=lambda i: (round(scores[i], 12), i))
        return [self.difficulties[i] for i in order]

    def estimate(self, level: float = LEVEL) -> Estimate:
        """The current d50 with its ``level`` interval, or its censored or floor status."""
        import numpy as np

        post = self._qp.posterior.values
        g = self._qp.param_domain
        lap = post.sum(axis=(0, 1, 2))
        top = float(np.sum(lap * (1 - g["lapse_rate"])))
        spread = math.exp(float(np.sum(post.sum(axis=(0, 2, 3)) * np.log(g["sd"]))))
        mu_post = post.sum(axis=(1, 2, 3))
        # d50 = exp(−μ): ascending d50 is descending μ
        d50s = np.exp(-g["mean"][::-1])
        cdf = np.cumsum(mu_post[::-1])
        a = (1 - level) / 2
        median = _quantile(d50s, cdf, 0.5)
        lower, upper = _quantile(d50s, cdf, a), _quantile(d50s, cdf, 1 - a)

        def say(status: Status, d50: float | None = None, lo: float | None = None,
                hi: float | None = None) -> Estimate:
            width = None if lo is None or hi is None else math.log(hi / lo)
            return Estimate(status, d50, lo, hi, self.lo, self.hi, top, spread,
                            self.baseline, self.items, width)

        if self._at_floor():
            return say("floor")
        if median > self.hi:
            return say("above")
        if median < self.lo:
            return say("below")
        return say("measured", median, lower, None if upper > self.hi else upper)

    def _at_floor(self) -> bool:
        """Whether the easy-item accuracy is not credibly above the baseline: the posterior
        puts more than 2.5% on a top within one grid step of it."""
        g = self._qp.param_domain
        lap = self._qp.posterior.values.sum(axis=(0, 1, 2))
        room = 1 - self.baseline
        near = g["lapse_rate"] >= room * (1 - 1e-3) - room / (LAPSE_STEPS - 1) - 1e-12
        return float(lap[near].sum()) > (1 - LEVEL) / 2

    def done(self, target_width: float) -> bool:
        """Whether the search may stop: the ``STOP_LEVEL`` interval on ln d50 is narrower
        than ``target_width`` (a stop on a narrow 95% interval is a stop on luck too often), or
        the median lies past either end of the range with 97.5%."""
        est = self.estimate(STOP_LEVEL)
        if est.status == "floor":
            return True
        if est.status in ("above", "below"):
            return self._beyond_sure()
        return est.log_width is not None and est.log_width < target_width

    def _beyond_sure(self) -> bool:
        import numpy as np

        g = self._qp.param_domain
        mu_post = self._qp.posterior.values.sum(axis=(1, 2, 3))
        d50 = np.exp(-g["mean"])
        beyond = float(mu_post[d50 > self.hi].sum()) + float(mu_post[d50 < self.lo].sum())
        return beyond > 1 - (1 - LEVEL) / 2


def _quantile(values: npt.NDArray[np.float64], cdf: npt.NDArray[np.float64], q: float) -> float:
    """The ``q`` quantile of a grid distribution over ascending ``values`` evenly spaced in log:
    each grid point's mass is spread evenly over its cell (half a step either side, in log
    value), and the quantile is interpolated within the cell where the CDF crosses ``q``."""
    import numpy as np

    logs = np.log(values)
    half = (logs[1] - logs[0]) / 2 if len(logs) > 1 else 0.0
    i = min(int(np.searchsorted(cdf, q)), len(values) - 1)
    before = float(cdf[i - 1]) if i else 0.0
    mass = float(cdf[i]) - before
    t = 0.5 if mass <= 0 else min(max((q - before) / mass, 0.0), 1.0)
    return float(math.exp(float(logs[i]) - half + t * 2 * half))


MIN_ROUNDS = 2  # rounds before the search may stop early (a first narrow interval is luck)


def run_search(search: HorizonSearch, answer: Any, budget: int, round_items: int,
               target_width: float, points: int = 4, min_rounds: int = MIN_ROUNDS) -> Estimate:
    """Rounds of ``round_items`` until ``budget`` answers, or, after ``min_rounds`` rounds,
    until ``search.done`` after two rounds in a row: ``answer(plan)`` takes
    ``[(difficulty, count), …]`` and returns ``[(difficulty, correct, n), …]``."""
    spent = rounds = narrow = 0
    if search.estimate().status == "floor":  # the ID answers alone: no fall to place
        return search.estimate()
    while spent < budget and narrow < 2:
        rounds += 1
        plan = search.next_round(min(round_items, budget - spent), points)
        for d, correct, n in answer(plan):
            search.add(d, correct, n)
            spent += n
        # stop once two rounds in a row end narrow enough: one narrow end can be a lucky draw
        narrow = narrow + 1 if rounds >= min_rounds and search.done(target_width) else 0
    return search.estimate()


def format_difficulty(x: float) -> str:
    """A difficulty for people: three significant digits, never in exponent form (1700, not
    1.7e+03)."""
    return f"{x:.0f}" if abs(x) >= 100 else f"{x:.3g}"


def fall_d50(top: float, baseline: float, curve: Sequence[tuple[float, float]]) -> float | None:
    """Where a fixed-bucket curve ``[(difficulty, accuracy), …]`` first crosses the midpoint
    between ``top`` and ``baseline``, interpolated in log difficulty (None: it never does; the
    first point's difficulty when the curve starts below the midpoint: the fall lies at or
    before it)."""
    mid = (top + baseline) / 2
    prev: tuple[float, float] | None = None
    for d, acc in curve:
        if acc < mid:
            if prev is None:
                return d
            (d0, a0) = prev
            t = (a0 - mid) / (a0 - acc) if a0 != acc else 0.0
            return math.exp(math.log(d0) + t * (math.log(d) - math.log(d0)))
        prev = (d, acc)
    return None
