"""Simulated responders with known curves: how well the horizon search recovers d50.

Each setting is a true curve of the family in ``scoring/horizon`` (or a logistic one, to see the
search off its own model), an ID range answered like a fixed-bucket run, and a search range.
``coverage`` runs the search on many seeded responders and counts how often its statement holds
the truth: a measured interval contains the true d50, "≥ max" is said of a d50 past the range,
"floor" of a model whose top is the baseline. ``fixed_width`` fits the same posterior to a
fixed log-spaced design, for the budget comparison. Used by ``tests/unit/test_horizon_coverage.py``
and ``bench/horizon_sim.py``; no model runs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from harness.scoring.horizon import Estimate, HorizonSearch, candidate_difficulties, run_search

ID_VALUES = (2, 5, 8)  # the ID buckets a simulated fixed run answered
ID_ITEMS = 100  # items per ID bucket (the board's size)


@dataclass(frozen=True)
class Setting:
    """One simulated responder and its search."""

    name: str  # how the docs table names it
    d50: float  # true d50 (inf: no fall within any range)
    sigma: float  # spread in ln-difficulty units
    top: float  # accuracy on easy items
    baseline: float  # the item baseline the fall ends at
    hi: int = 512  # largest difficulty the search may try
    logistic: bool = False  # the true curve is logistic in ln d, not the normal CDF

    def p(self, d: float) -> float:
        """True accuracy at difficulty ``d``."""
        if self.top <= self.baseline or math.isinf(self.d50):
            return self.top
        z = (math.log(d) - math.log(self.d50)) / self.sigma
        fall = 1 / (1 + math.exp(-1.7 * z)) if self.logistic else 0.5 * math.erfc(-z / 2**0.5)
        return self.baseline + (self.top - self.baseline) * (1 - fall)


SETTINGS = (
    Setting("steep, no lapse", 20, 0.2, 1.0, 0.0),
    Setting("shallow", 40, 1.0, 0.9, 0.0),
    Setting("low top (lapse 0.4)", 15, 0.5, 0.6, 0.0),
    Setting("binary baseline 0.5", 12, 0.3, 0.95, 0.5),
    Setting("4-way choice, far fall", 100, 0.5, 0.7, 0.25),
    Setting("falls inside the ID range", 5, 0.3, 0.9, 0.0),
    Setting("logistic curve", 30, 0.4, 0.85, 0.0, logistic=True),
    Setting("at the floor", math.inf, 1.0, 0.02, 0.02),
    Setting("beyond the range", 5000, 0.3, 0.95, 0.0),
)


def _draw(rng: object, n: int, p: float) -> int:
    return int(rng.binomial(n, p))  # type: ignore[attr-defined]


def simulate(s: Setting, seed: int, budget: int, round_items: int,
             target_width: float, id_items: int = ID_ITEMS) -> Estimate:
    """One search on a seeded responder of setting ``s`` whose fixed run answered ``id_items``
    items in each ID bucket."""
    import numpy as np

    rng = np.random.default_rng(seed)
    search = HorizonSearch(1, s.hi, s.baseline)
    for d in ID_VALUES:
        search.add(d, _draw(rng, id_items, s.p(d)), id_items)
    return run_search(search, lambda plan: [(d, _draw(rng, n, s.p(d)), n) for d, n in plan],
                      budget, round_items, target_width)


def holds(s: Setting, est: Estimate) -> bool:
    """Whether the search's statement holds the true d50."""
    if est.status == "floor":
        return s.top <= s.baseline
    if est.status == "above":
        return s.d50 >= s.hi
    if est.status == "below":
        return s.d50 <= 1
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


def coverage(s: Setting, runs: int, budget: int = 200, round_items: int = 40,
             target_width: float = math.log(2.0), seed: int = 0,
             id_items: int = ID_ITEMS) -> Coverage:
    """``runs`` seeded searches of setting ``s`` (``id_items`` per ID bucket)."""
    held, spent, widths, missed = 0, 0, [], []
    statuses: dict[str, int] = {}
    for r in range(runs):
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
    import numpy as np

    widths = []
    grid = candidate_difficulties(1, s.hi, points)
    for r in range(runs):
        rng = np.random.default_rng(seed * 100_003 + r)
        search = HorizonSearch(1, s.hi, s.baseline)
        for d in ID_VALUES:
            search.add(d, _draw(rng, ID_ITEMS, s.p(d)), ID_ITEMS)
        for d in grid:
            search.add(d, _draw(rng, per_point, s.p(d)), per_point)
        est = search.estimate()
        widths.append(est.log_width if est.log_width is not None else math.inf)
    widths.sort()
    w = widths[len(widths) // 2]
    return None if math.isinf(w) else w


def table(rows: Sequence[Coverage]) -> str:
    """The docs table of a coverage simulation."""
    out = ["| setting | true d50 | σ | top | baseline | runs | statement holds | statuses "
           "| search items (mean) | median width ×d50 |", "|---" * 10 + "|"]
    for c in rows:
        s = c.setting
        d50 = "none" if math.isinf(s.d50) else f"{s.d50:g}"
        st = ", ".join(f"{k} {v}" for k, v in c.statuses.items())
        w = "—" if c.median_width is None else f"{math.exp(c.median_width):.2f}"
        out.append(f"| {s.name} | {d50} | {s.sigma:g} | {s.top:g} | {s.baseline:g} | {c.runs} "
                   f"| {100 * c.rate:.1f}% | {st} | {c.mean_items:.0f} | {w} |")
    return "\n".join(out)
