"""Simulated responders with known curves: how well the horizon search recovers d50.

Each setting is a true curve, a way answers are correlated, an ID range answered like a
fixed-bucket run, and a search range. The curves are the search's own shapes and departures
from them (a logistic fall, skew-normal and Richards falls, a step, a dip before the fall, a
rise); answers are independent, or share a beta-distributed accuracy: per batch (each round's
answers at a difficulty share a fresh draw, as the search's model assumes), per difficulty (one
draw for every round there) or per cluster of 5 items within a batch. ``coverage`` runs the
search on many seeded responders and counts how often its statement holds the truth: a
measured interval contains the true d50, "≥ max" is said of a d50 past the range, "floor" of a
model whose top is the baseline; for a curve that falls, recovers and falls again, "misfit", or
an interval that holds where it first falls halfway (for every other curve a misfit is a miss).
``SETTINGS`` is the grid the docs table shows, ``UNSEEN`` departures the grid does not contain,
``LIMITS`` what the search does not protect against. ``fixed_width`` fits the same posterior to
a fixed log-spaced design, for the budget comparison. Used by
``tests/unit/test_horizon_coverage.py`` and ``bench/horizon_sim.py``; no model runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from harness.scoring.horizon import Estimate, HorizonSearch, candidate_difficulties, run_search

ID_VALUES = (2, 5, 8)  # the ID buckets a simulated fixed run answered
ID_ITEMS = 100  # items per ID bucket (the board's size)
Curve = Literal["normal", "logistic", "late", "early", "skewnormal", "richards", "step", "dip",
                "rise"]
Correlation = Literal["none", "round", "difficulty", "cluster"]


@dataclass(frozen=True)
class Setting:
    """One simulated responder and its search."""

    name: str  # how the docs table names it
    d50: float  # true d50: the midpoint crossing of the mean curve (inf: no fall)
    sigma: float  # spread in ln-difficulty units (late, early: the Weibull shape k in d)
    top: float  # accuracy on easy items
    baseline: float  # the item baseline the fall ends at
    hi: int = 512  # largest difficulty the search may try
    curve: Curve = "normal"  # the true fall's form (see ``p``)
    lean: float = 0.0  # skew-normal α, Richards ν, or how far below d50 a dip lies (×)
    icc: float = 0.0  # intra-class correlation of a batch's answers
    by: Correlation = "none"  # who shares a draw: a round's answers at one difficulty (round),
    # every answer at one difficulty (difficulty), or clusters of 5 items in a batch (cluster)

    def p(self, d: float) -> float:
        """True mean accuracy at difficulty ``d``."""
        if self.top <= self.baseline or math.isinf(self.d50):
            return self.top
        return self.baseline + (self.top - self.baseline) * min(max(self._left(d), 0.0), 1.0)

    def _left(self, d: float) -> float:
        """The share of the fall not yet taken at ``d`` (1/2 at d50, except past a dip)."""
        r = math.log(d) - math.log(self.d50)
        z = r / self.sigma
        if self.curve == "logistic":
            return 1 / (1 + math.exp(min(1.7 * z, 700)))
        if self.curve == "late":  # Weibull survival in d, shape sigma
            return float(2.0 ** -math.exp(min(self.sigma * r, 700)))
        if self.curve == "early":
            return float(1 - 2.0 ** -math.exp(min(-self.sigma * r, 700)))
        if self.curve == "skewnormal":
            from scipy.stats import skewnorm

            return float(skewnorm.sf(z + float(skewnorm.median(self.lean)), self.lean))
        if self.curve == "richards":
            m = -math.log(2 ** (1 / self.lean) - 1) / 1.7
            return float(1 - (1 + math.exp(min(-1.7 * (z + m), 700))) ** -self.lean)
        if self.curve == "step":
            return 1.0 if d < self.d50 else 0.0
        fall = 0.5 * math.erfc(z / math.sqrt(2.0))
        if self.curve == "dip":  # a dip of depth 0.8 around d50 / lean before the fall
            return fall - 0.8 * math.exp(-0.5 * ((r + math.log(self.lean)) / 0.35) ** 2)
        if self.curve == "rise":  # a tenth of the accuracy below d50 / lean, all of it above
            return fall * (0.1 + 0.9 / (1 + math.exp(-8 * (r + math.log(self.lean)))))
        return fall

    @property
    def monotone(self) -> bool:
        return self.curve not in ("dip", "rise")

    def first_crossing(self) -> float | None:
        """Where the mean curve first falls below the midpoint between top and baseline (a
        curve that is not monotone has no single d50; this is where it first falls halfway),
        to 0.1% in d; None where it starts below it."""
        mid = (self.top + self.baseline) / 2
        if self.p(1.0) < mid:
            return None
        lo, step = 0.0, 0.001
        while self.p(math.exp(lo + step)) >= mid:
            lo += step
            if lo > 20:
                return math.inf
        return math.exp(lo + step / 2)


SETTINGS = (
    Setting("steep, no lapse", 20, 0.2, 1.0, 0.0),
    Setting("shallow", 40, 1.0, 0.9, 0.0),
    Setting("low top (lapse 0.4)", 15, 0.5, 0.6, 0.0),
    Setting("binary baseline 0.5", 12, 0.3, 0.95, 0.5),
    Setting("4-way choice, far fall", 100, 0.5, 0.7, 0.25),
    Setting("falls inside the ID range", 5, 0.3, 0.9, 0.0),
    Setting("logistic curve", 30, 0.4, 0.85, 0.0, curve="logistic"),
    Setting("at the floor", math.inf, 1.0, 0.02, 0.02),
    Setting("beyond the range", 5000, 0.3, 0.95, 0.0),
    Setting("holds, then collapses (Weibull k 3)", 20, 3.0, 0.9, 0.0, curve="late"),
    Setting("long tail in d (Weibull k 0.7)", 30, 0.7, 0.9, 0.0, curve="late"),
    Setting("falls at once, tails off (mirrored Weibull k 1.5)", 25, 1.5, 0.9, 0.0,
            curve="early"),
    Setting("batches correlated, ICC 0.1", 20, 0.4, 0.9, 0.0, icc=0.1, by="round"),
    Setting("batches correlated, ICC 0.3", 20, 0.4, 0.9, 0.0, icc=0.3, by="round"),
    Setting("a step", 24.5, 1.0, 0.95, 0.0, curve="step"),
    Setting("falls, recovers, falls again", 100, 0.3, 0.9, 0.0, curve="dip", lean=5.0),
)

UNSEEN = (
    Setting("skew-normal fall leaning late (α 4)", 30, 0.5, 0.9, 0.0, curve="skewnormal",
            lean=4.0),
    Setting("skew-normal fall leaning early (α −4)", 15, 0.4, 0.85, 0.0, curve="skewnormal",
            lean=-4.0),
    Setting("Richards fall (ν 0.3), 4-way choice", 40, 0.5, 0.8, 0.25, curve="richards",
            lean=0.3),
    Setting("Richards fall (ν 4)", 12, 0.3, 0.95, 0.0, curve="richards", lean=4.0),
    Setting("a step inside the ID range, binary", 6.5, 1.0, 0.9, 0.5, curve="step"),
    Setting("clusters of 5 items within a batch, ICC 0.3", 25, 0.5, 0.9, 0.0, icc=0.3,
            by="cluster"),
    Setting("logistic, per-round ICC 0.2, low top", 30, 0.4, 0.7, 0.0, curve="logistic",
            icc=0.2, by="round"),
)

LIMITS = (  # what the search does not protect against (docs/statistics.md names them)
    Setting("a dip at the ID edge, a recovery, then the fall", 60, 0.3, 0.9, 0.0, curve="dip",
            lean=6.0),
    Setting("a dip a third of the way below the fall, a recovery, then the fall", 100, 0.3, 0.9,
            0.0, curve="dip", lean=3.0),
    Setting("low on the ID range, a rise past it, then the fall", 60, 0.3, 0.9, 0.0,
            curve="rise", lean=6.0),
    Setting("one draw per difficulty for every round, ICC 0.1", 25, 0.5, 0.9, 0.0, icc=0.1,
            by="difficulty"),
)


class Responder:
    """Seeded answers of one setting: batches share a beta draw as ``s.by`` says."""

    def __init__(self, s: Setting, seed: int) -> None:
        import numpy as np

        self.s, self.rng, self.round = s, np.random.default_rng(seed), 0
        self._kept: dict[float, float] = {}  # difficulty → its batch accuracy (by difficulty)

    def __call__(self, d: float, n: int) -> int:
        p = self.s.p(d)
        if self.s.by == "difficulty":
            if d not in self._kept:
                self._kept[d] = self._batch(p)
            p = self._kept[d]
        elif self.s.by == "round":
            p = self._batch(p)
        elif self.s.by == "cluster":
            sizes = [min(5, n - i) for i in range(0, n, 5)]
            return sum(int(self.rng.binomial(m, self._batch(p))) for m in sizes)
        return int(self.rng.binomial(n, p))

    def _batch(self, p: float) -> float:
        c = 1 / self.s.icc - 1
        if p <= 0 or p >= 1:
            return p
        return float(self.rng.beta(p * c, (1 - p) * c))

    def rounds(self, plan: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
        self.round += 1
        return [(d, self(d, n), n) for d, n in plan]


def simulate(s: Setting, seed: int, budget: int, round_items: int,
             target_width: float, id_items: int = ID_ITEMS) -> Estimate:
    """One search on a seeded responder of setting ``s`` whose fixed run answered ``id_items``
    items in each ID bucket."""
    answer = Responder(s, seed)
    search = HorizonSearch(1, s.hi, s.baseline, edge=max(ID_VALUES))
    for d in ID_VALUES:
        search.add(d, answer(d, id_items), id_items)
    return run_search(search, answer.rounds, budget, round_items, target_width)


def holds(s: Setting, est: Estimate) -> bool:
    """Whether the search's statement holds the truth. For a curve that is not monotone:
    "misfit", or a measured interval holding the first midpoint crossing."""
    if not s.monotone:
        cross = s.first_crossing()
        if est.status == "misfit":
            return True
        return (est.status == "measured" and cross is not None and est.lower is not None
                and est.lower <= cross <= (est.upper if est.upper is not None else math.inf))
    if est.status == "floor":
        return s.top <= s.baseline
    if est.status == "above":
        return s.d50 >= s.hi
    if est.status == "below":
        return s.d50 <= 1
    if est.status == "misfit":
        return False
    assert est.lower is not None
    return est.lower <= s.d50 <= (est.upper if est.upper is not None else math.inf)


@dataclass(frozen=True)
class Coverage:
    """One setting's simulation."""

    setting: Setting
    runs: int  # seeded responders
    held: int  # runs whose statement held the truth
    missed: tuple[int, ...]  # the runs (seed offsets) whose statement missed the truth
    statuses: dict[str, int]  # how many runs ended with each status
    mean_items: float  # search items spent, mean over runs (the ID items not counted)
    median_width: float | None  # median ln-width of the measured, closed intervals

    @property
    def rate(self) -> float:
        return self.held / self.runs

    def record(self) -> dict[str, Any]:
        """The setting's row of the bench file."""
        return {"setting": self.setting.name, "runs": self.runs, "held": self.held,
                "missed": list(self.missed), "statuses": self.statuses,
                "mean_items": self.mean_items, "median_width": self.median_width}


def coverage(s: Setting, runs: int, budget: int = 200, round_items: int = 40,
             target_width: float = math.log(2.0), seed: int = 0,
             id_items: int = ID_ITEMS, first: int = 0) -> Coverage:
    """``runs`` seeded searches of setting ``s`` (``id_items`` per ID bucket), from run
    ``first`` on (a bench splits the runs of one setting between processes this way)."""
    held, spent, widths, missed = 0, 0, [], []
    statuses: dict[str, int] = {}
    for r in range(first, first + runs):
        est = simulate(s, seed * 100_003 + r, budget, round_items, target_width, id_items)
        ok = holds(s, est)
        held += ok
        if not ok:
            missed.append(r)
        statuses[est.status] = statuses.get(est.status, 0) + 1
        spent += est.items - id_items * len(ID_VALUES)
        if est.log_width is not None:
            widths.append(est.log_width)
    widths.sort()
    med = widths[len(widths) // 2] if widths else None
    return Coverage(s, runs, held, tuple(missed), dict(sorted(statuses.items())), spent / runs,
                    med)


def fixed_width(s: Setting, per_point: int, points: int, runs: int, seed: int = 0
                ) -> float | None:
    """Median ln-width of the d50 interval from a fixed design: ``points`` log-spaced
    difficulties over the search range with ``per_point`` items each (plus the same ID items)."""
    widths = []
    grid = candidate_difficulties(1, s.hi, points)
    for r in range(runs):
        answer = Responder(s, seed * 100_003 + r)
        search = HorizonSearch(1, s.hi, s.baseline)
        for d in ID_VALUES:
            search.add(d, answer(d, ID_ITEMS), ID_ITEMS)
        for d in grid:
            search.add(d, answer(d, per_point), per_point)
        est = search.estimate()
        widths.append(est.log_width if est.log_width is not None else math.inf)
    widths.sort()
    w = widths[len(widths) // 2]
    return None if math.isinf(w) else w


def _form(s: Setting) -> str:
    if s.curve in ("late", "early"):
        return f"k {s.sigma:g}"
    extra = {"skewnormal": f", α {s.lean:g}", "richards": f", ν {s.lean:g}"}.get(s.curve, "")
    return "—" if s.curve == "step" else f"σ {s.sigma:g}{extra}"


def table(rows: Sequence[Coverage]) -> str:
    """The docs table of a coverage simulation."""
    out = ["| setting | curve | true d50 | spread | top | baseline | ICC (batch) | runs "
           "| statement holds | statuses | search items (mean) | median width ×d50 |",
           "|---" * 12 + "|"]
    for c in rows:
        s = c.setting
        d50 = "none" if math.isinf(s.d50) else f"{s.d50:g}"
        st = ", ".join(f"{k} {v}" for k, v in c.statuses.items())
        w = "—" if c.median_width is None else f"{math.exp(c.median_width):.2f}"
        icc = "0" if s.by == "none" else f"{s.icc:g} ({s.by})"
        out.append(f"| {s.name} | {s.curve} | {d50} | {_form(s)} | {s.top:g} | {s.baseline:g} "
                   f"| {icc} | {c.runs} | {100 * c.rate:.1f}% | {st} | {c.mean_items:.0f} "
                   f"| {w} |")
    return "\n".join(out)
