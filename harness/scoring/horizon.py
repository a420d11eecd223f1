"""The horizon d50: where accuracy falls halfway from the model's ID level to the item baseline.

The curve and its likelihood are ``scoring/horizon_model``: a fall of one of three shapes
(symmetric in ln d, late, early) from the easy-item accuracy 1 − λ down to the **item baseline**
γ (the best constant answer of the items, ``scoring/baselines``; fixed, not fitted), with the
answers of one round at one difficulty a beta-binomial batch whose intra-class correlation ρ is
integrated over, so that answers that vary more than independent draws widen the interval.

**Design.** QUEST+'s rule (Watson 2017): after each round, the candidate difficulties are
ranked by the entropy the posterior (ρ summed out; one answer's likelihood does not depend on
it) is expected to have after one more answer there, and a round puts its items on the
``points`` best-ranked (``next_round``), so a batched backend gets many prompts at once. The
``questplus`` package computes the same rule for its own fixed functions, one Bernoulli answer
per update; the beta-binomial batches and the leaning shapes are not among them, so the grid is
kept here (``tests/unit/test_horizon.py`` checks the normal shape's likelihood against it).
The estimate is the posterior median of d50 with the central 95% credible interval of its
marginal (``estimate``); ``horizon_sim`` measures how often that interval holds the true d50.

**Why not psignifit for the fit.** psignifit 4.3 (Schütt et al. 2016) bounds the lapse rate to
(0, 0.5) under a Beta(1, 10) prior, made for observers who rarely lapse. A model whose easy-item
accuracy is 80% has λ = 0.2: on 20 simulated data sets (d50 = 20, top 0.8, 11 levels × 20 items)
its fitted λ was 0 each time and its 95% interval held the true d50 0 times of 20, at about 1.5 s
a fit; a flat lapse prior made its optimiser return λ < 0. Its overdispersion η is kept here (as
ρ = η²).

**Censoring and misfit.** A model still above the midpoint at the largest difficulty tried gets
"≥ max" (``status="above"``), never a number; one already below it at the smallest gets "≤ min"
(``"below"``); one whose ID level is not above the baseline has no fall to place (``"floor"``);
a check round whose fresh answers contradict the fitted fall (``horizon_fit``) gives
``"misfit"``, with the tried accuracies instead of a d50 (``verdict``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from harness.scoring.horizon_model import LAPSE_STEPS, Grid, normalised

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Status = Literal["measured", "above", "below", "floor", "misfit"]
LEVEL = 0.95  # credible level of the d50 interval
STOP_LEVEL = 0.99  # the interval whose width decides an early stop (wider than the one shown)
CANDIDATES = 24  # difficulties the search may choose from (log-spaced, distinct integers)


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

    status: Status  # measured, above ("≥ max"), below ("≤ min"), floor or misfit
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
    overdispersion: float = 0.0  # ρ, posterior mean: intra-class correlation within a batch
    shapes: tuple[float, ...] = ()  # posterior weight of each fall shape (SHAPES' order)
    fit_p: float | None = None  # the check round's p-value (None: no check ran)
    tried: tuple[tuple[float, float, int], ...] = ()  # (difficulty, correct, answered), pooled


class HorizonSearch:
    """A search for d50 over ``lo..hi`` with the item baseline ``baseline``; ``edge`` is the
    largest ID difficulty (where the check round starts looking)."""

    def __init__(self, lo: int, hi: int, baseline: float, edge: float | None = None) -> None:
        self.lo, self.edge = lo, edge
        self.baseline = min(max(float(baseline), 0.0), 0.98)
        self._start(hi)

    def _start(self, hi: int) -> None:
        """No answers yet, over ``lo..hi``."""
        lo = self.lo
        self.hi = hi
        self.difficulties = candidate_difficulties(lo, hi)
        self.grid = Grid(lo, hi, self.baseline)
        # the prior (flat but for ρ, ``RHO_PRIOR``), kept in logs: no underflow
        self._logpost = self.grid.log_prior()
        self._post: npt.NDArray[np.float64] | None = None
        self._terms: dict[int, tuple[npt.NDArray[np.float64], ...]] = {}
        self.items = 0
        self.batches: list[tuple[float, float, int]] = []  # (difficulty, correct, answered)
        self.fit_p: float | None = None  # the check round's p-value (None: no check ran)
        self.check_items = 0  # answers of the check round

    def widen(self, hi: int) -> None:
        """The same search over ``lo..hi`` (``hi`` past the old end): the grid and candidates
        of the wider range, every batch so far placed in it again (a model still above its
        midpoint at the end of the range, searched on; ``run_search``'s ``extend``)."""
        batches = self.batches
        self._start(hi)
        for d, c, n in batches:
            self.add(d, c, n)

    def add(self, d: float, correct: float, n: int) -> None:
        """One batch: ``correct`` of ``n`` answers right at difficulty ``d`` (one round's
        answers there, or an ID difficulty's; a fractional ``correct`` from partial-credit
        scores is used as is)."""
        if n <= 0:
            return
        key = float(d)
        self._logpost += self.grid.loglik(key, correct, n)
        self._post = None
        self.items += n
        self.batches.append((key, correct, n))

    @property
    def tried(self) -> dict[float, tuple[float, int]]:
        """Difficulty → (correct, answered): the batches pooled per difficulty."""
        out: dict[float, tuple[float, int]] = {}
        for d, c, n in self.batches:
            c0, n0 = out.get(d, (0.0, 0))
            out[d] = (c0 + c, n0 + n)
        return out

    def posterior(self) -> npt.NDArray[np.float64]:
        """The normalised posterior over (ρ, ln d50, σ, λ, shape)."""
        if self._post is None:
            self._post = normalised(self._logpost)
        return self._post

    def next_round(self, items: int, points: int = 4) -> list[tuple[int, int]]:
        """Where the next ``items`` answers go: the ``points`` candidate difficulties with the
        lowest expected posterior entropy after one answer (QUEST+'s ranking), the items
        split evenly between them, the best-ranked getting any remainder."""
        ranked = self._ranked()
        chosen = ranked[: max(1, min(points, len(ranked), items))]
        base, extra = divmod(items, len(chosen))
        return [(d, base + (i < extra)) for i, d in enumerate(chosen) if base + (i < extra)]

    def _ranked(self) -> list[int]:
        """Candidates from the most to the least informative (ties: the smaller difficulty)."""
        from scipy.special import xlogy

        post = self.posterior().sum(axis=0).ravel()  # one answer does not depend on ρ
        plogp = xlogy(post, post)
        scores = []
        for d in self.difficulties:
            p, plp, qlq = self._entropy_terms(d)
            h = 0.0
            for like, llogl in ((p, plp), (1 - p, qlq)):
                mass = float(post @ like)
                if mass <= 0:
                    continue
                # −Σ q ln q with q = post · like / mass, weighted by the outcome's mass
                h -= float(like @ plogp) + float(post @ llogl) - mass * math.log(mass)
            scores.append(h)
        order = sorted(range(len(self.difficulties)), key=lambda i: (round(scores[i], 12), i))
        return [self.difficulties[i] for i in order]

    def _entropy_terms(self, d: int) -> tuple[npt.NDArray[np.float64], ...]:
        """p(d), p ln p and (1 − p) ln(1 − p), flat (kept per candidate)."""
        from scipy.special import xlogy

        got = self._terms.get(d)
        if got is None:
            p = self.grid.accuracy(d).ravel()
            got = self._terms[d] = (p, xlogy(p, p), xlogy(1 - p, 1 - p))
        return got

    def estimate(self, level: float = LEVEL) -> Estimate:
        """The current d50 with its ``level`` interval, or its censored or floor status."""
        import numpy as np

        post = self.posterior()
        g = self.grid
        top = float(np.sum(post.sum(axis=(0, 1, 2, 4)) * (1 - g.lapse)))
        spread = math.exp(float(np.sum(post.sum(axis=(0, 1, 3, 4)) * np.log(g.sigma))))
        rho = float(np.sum(post.sum(axis=(1, 2, 3, 4)) * g.rho))
        shapes = tuple(float(x) for x in post.sum(axis=(0, 1, 2, 3)))
        cdf = np.cumsum(post.sum(axis=(0, 2, 3, 4)))
        d50s = np.exp(g.log_d50)
        a = (1 - level) / 2
        median = _quantile(d50s, cdf, 0.5)
        lower, upper = _quantile(d50s, cdf, a), _quantile(d50s, cdf, 1 - a)
        tried = tuple((d, c, n) for d, (c, n) in sorted(self.tried.items()))

        def say(status: Status, d50: float | None = None, lo: float | None = None,
                hi: float | None = None) -> Estimate:
            width = None if lo is None or hi is None else math.log(hi / lo)
            return Estimate(status, d50, lo, hi, self.lo, self.hi, top, spread,
                            self.baseline, self.items, width, rho, shapes, None, tried)

        if self._at_floor():
            return say("floor")
        if median > self.hi:
            return say("above")
        if median < self.lo:
            return say("below")
        return say("measured", median, lower, None if upper > self.hi else upper)

    def check_round(self, items: int) -> list[tuple[int, int]]:
        """Where a check round of ``items`` goes (``horizon_fit.check_plan``): the widest
        gaps between tried difficulties below the current d50 estimate."""
        from harness.scoring.horizon_fit import check_plan

        est = self.estimate()
        below = self.hi if est.status == "above" else (est.d50 or self.lo)
        return check_plan(self.difficulties, list(self.tried), self._edge(), below, items)

    def _edge(self) -> float:
        """The largest ID difficulty (the smallest tried where it was not given)."""
        return self.edge if self.edge is not None else min(self.tried, default=self.lo)

    def add_round(self, batches: Sequence[tuple[float, float, int]], check: bool = False
                  ) -> None:
        """One round's batches, added to the fit; ``check``: the check round's, first placed
        in the predictive distribution of the posterior before them, less the batches at the
        ends of the gaps they check (``horizon_fit.unchecked``, ``held_out_p``), and counted
        in ``check_items``."""
        from harness.scoring.horizon_fit import held_out_p, unchecked

        asked = [b for b in batches if b[2] > 0]
        if check and asked:
            kept = unchecked(self.batches, self._edge(), [d for d, _, _ in asked])
            post = self.posterior() if len(kept) == len(self.batches) else self.grid.posterior(kept)
            p = held_out_p(self.grid, post, asked)
            self.fit_p = min(1.0, p * len(asked))  # Bonferroni over the check's batches
        for d, c, n in asked:
            self.add(d, c, n)
            self.check_items += n if check else 0

    def at_level(self, level: float, credible: float = LEVEL
                 ) -> tuple[float | None, float | None, float | None]:
        """Where accuracy is down to ``level`` × the easy-item accuracy (``horizon.level``;
        NoLiMa's effective length at 0.85), from the same posterior as d50: its posterior
        median and ``credible`` interval (None: past the range's end, where the curve never
        falls that far in the range's terms)."""
        import numpy as np

        weights = self.posterior().sum(axis=0).ravel()  # ρ integrated out
        logs = np.nan_to_num(self.grid.log_crossing(level).ravel(), nan=np.inf)
        order = np.argsort(logs, kind="stable")
        cdf = np.cumsum(weights[order])
        cdf /= cdf[-1]
        end = math.log(self.hi)

        def q(p: float) -> float | None:
            x = float(logs[order][min(int(np.searchsorted(cdf, p)), len(order) - 1)])
            return None if x > end else math.exp(x)

        a = (1 - credible) / 2
        return q(0.5), q(a), q(1 - a)

    def verdict(self) -> Estimate:
        """The estimate the search reports: a check round that contradicts the fitted fall
        (``horizon_fit``) makes it ``misfit``, without a d50."""
        from dataclasses import replace

        from harness.scoring.horizon_fit import MISFIT_P

        est = self.estimate()
        if est.status == "floor":
            return est
        if self.fit_p is not None and self.fit_p < MISFIT_P:
            return replace(est, status="misfit", d50=None, lower=None, upper=None,
                           log_width=None, fit_p=self.fit_p)
        return replace(est, fit_p=self.fit_p)

    def _at_floor(self) -> bool:
        """Whether the easy-item accuracy is not credibly above the baseline: the posterior
        with independent answers (ρ = 0) puts more than 2.5% on a top within one grid step of
        it. "No fall to place" is a claim about the ID answers' level; read through a large ρ,
        a few ID answers of a model well above its baseline would too often be called floor."""
        import numpy as np

        g = self.grid
        slice0 = np.exp(self._logpost[0] - self._logpost[0].max())
        lap = slice0.sum(axis=(0, 1, 3)) / slice0.sum()
        room = 1 - self.baseline
        near = g.lapse >= room * (1 - 1e-3) - room / (LAPSE_STEPS - 1) - 1e-12
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

        g = self.grid
        mu_post = self.posterior().sum(axis=(0, 2, 3, 4))
        d50 = np.exp(g.log_d50)
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
               target_width: float, points: int = 4, min_rounds: int = MIN_ROUNDS,
               extend: Callable[[HorizonSearch], int] | None = None) -> Estimate:
    """Rounds of ``round_items`` until ``budget`` answers less the check round's, or, after
    ``min_rounds`` rounds, until ``search.done`` after two rounds in a row; then the check
    round (``horizon_fit``; searches of at least ``CHECK_MIN_BUDGET`` answers).
    ``answer(plan)`` takes ``[(difficulty, count), …]`` and returns
    ``[(difficulty, correct, n), …]``. Where the rounds end with the model still above its
    midpoint at the end of the range, ``extend(search)`` may widen the search
    (``HorizonSearch.widen``) and give the answers it may spend past it (0: it cannot
    widen); the rounds then go on, before the check round."""
    from harness.scoring.horizon_fit import CHECK_ITEMS, CHECK_MIN_BUDGET

    spent = rounds = narrow = 0
    if search.estimate().status == "floor":  # the ID answers alone: no fall to place
        return search.verdict()
    check = CHECK_ITEMS if budget >= CHECK_MIN_BUDGET else 0
    while True:
        while spent < budget - check and narrow < 2:
            rounds += 1
            plan = search.next_round(min(round_items, budget - check - spent), points)
            got = answer(plan)
            search.add_round(got)
            spent += sum(n for _, _, n in got)
            # stop once two rounds in a row end narrow enough: one narrow end can be a lucky
            # draw
            narrow = narrow + 1 if rounds >= min_rounds and search.done(target_width) else 0
        more = (extend(search) if extend is not None and search.estimate().status == "above"
                else 0)
        if more <= 0:
            break
        budget, rounds, narrow = spent + check + more, 0, 0
    if check and search.estimate().status != "floor" and (plan := search.check_round(check)):
        search.add_round(answer(plan), check=True)
    return search.verdict()


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
