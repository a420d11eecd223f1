"""Whether a search's answers fit one fall: a held-out check of the stretch it skipped.

The search spends its answers where they pin d50 down, so the difficulties between the ID range
and the fall are often never asked: a dip there and a recovery would go unseen. After the search
stops, a **check round** (``CHECK_ITEMS`` answers, out of the budget) goes to the middles of the
widest gaps between tried difficulties from the ID edge to the estimated d50 (``check_plan``).
Before those answers join the fit, each batch is placed in the predictive distribution the
posterior gives for it (beta-binomial at each grid point, ρ included, so batch-correlated
answers are expected to wander more): the two-sided tail probability is its p-value
(``held_out_p``). The answers were not used to fit the curve they are checked against, so under
a single fall of the model's family the p-value is uniform, and the smallest one, times the
number of check batches (Bonferroni), falls below ``MISFIT_P`` in about that share of
searches or fewer (a posterior predictive p-value is calibrated only roughly at one true curve;
``bench/horizon_sim.py`` counts the flags on monotone curves). Below it the answers contradict
one fall (a dip and a recovery, a rise, a fall much earlier than fitted) and the search reports
``misfit`` with the tried accuracies instead of a d50.

The predictive comes from the posterior **without the batches at the ends of the gaps being
checked** (``unchecked``: for each check point, the tried difficulties just below and just
above it, past the ID edge). A search that had itself sampled a dip there (a batch far below
the fitted curve next to the untried gap) otherwise reads it as correlated batches: the
posterior's ρ grows, the predictive widens, and the fresh answers in the dip pass. Fitted
without them, the curve at the gap comes from the ID answers and the other batches, and ρ from
the batches that fit it, so a dip the search had sampled is flagged too. The test stays valid:
the check's answers are still held out from the fit they are placed in, which only has fewer
answers. ``bench/horizon_sim.py`` measures both sides: the share of the grid's curve that
falls, recovers and falls again flagged, and the flags on its monotone and batch-correlated
settings (docs/statistics.md).

Checking every round the same way before it joins the fit (a prequential check) was tried and
dropped: the level then has to be shared with every search batch, and on a curve that falls,
recovers and falls again it flagged no more searches than the check round alone, at more cost.

The predictive tail is averaged over ``DRAWS`` grid points drawn from the posterior with a
fixed seed, so the same answers always get the same verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from harness.scoring.horizon_model import Grid

CHECK_ITEMS = 30  # answers of the check round (up to three difficulties of 10)
CHECK_POINTS = 3
CHECK_MIN_BUDGET = 100  # a smaller search keeps every answer for the fit (no check)
DRAWS = 1000  # grid points drawn from the posterior for each predictive tail
MISFIT_P = 0.01  # family-wise level of the check
SEED = 20_160_301  # the draws' seed (fixed: the verdict is a function of the answers)


def check_plan(candidates: Sequence[int], tried: Sequence[float], edge: float, below: float,
               items: int, points: int = CHECK_POINTS) -> list[tuple[int, int]]:
    """Where the check round goes: for the ``points`` widest gaps (in log difficulty) between
    consecutive tried difficulties from the ID ``edge`` up to ``below`` (the whole tried range
    where the fall lies inside the ID range), the untried candidate nearest the gap's
    geometric middle; ``items`` split evenly. Empty where no gap holds an untried candidate."""
    done = sorted({float(d) for d in tried})
    start = edge if below > edge else done[0]
    edges = sorted({d for d in done if start <= d <= below} | {start, below})
    gaps = sorted(((math.log(b / a), a, b) for a, b in zip(edges, edges[1:], strict=False)),
                  reverse=True)
    chosen: list[int] = []
    for _, a, b in gaps:
        inside = [c for c in candidates if a < c < b and c not in done and c not in chosen]
        if inside:
            mid = math.sqrt(a * b)
            chosen.append(min(inside, key=lambda c: (abs(math.log(c / mid)), c)))
        if len(chosen) == points:
            break
    if not chosen:
        return []
    base, extra = divmod(items, len(chosen))
    return [(d, base + (i < extra)) for i, d in enumerate(sorted(chosen))]


def unchecked(batches: Sequence[tuple[float, float, int]], edge: float, points: Sequence[float]
              ) -> list[tuple[float, float, int]]:
    """The ``batches`` the check's predictive is fitted on: all but those at the ends of the
    gaps the check's ``points`` fill (the tried difficulties just below and just above each
    point, past the ID ``edge``), so that a dip the search sampled at a gap's end is not first
    read as overdispersion, while the batches elsewhere still place the curve."""
    tried = sorted({d for d, _, _ in batches})
    ends: set[float] = set()
    for c in points:
        below = [d for d in tried if d < c]
        above = [d for d in tried if d > c]
        ends.update(d for d in (below[-1:] + above[:1]) if d > edge)
    return [b for b in batches if b[0] not in ends]


def _sample(post: npt.NDArray[np.float64], u: npt.NDArray[np.float64]
            ) -> npt.NDArray[np.int64]:
    """Flat grid indices drawn from ``post`` by inverting its CDF at ``u``."""
    import numpy as np

    cdf = np.cumsum(post.ravel())
    index: npt.NDArray[np.int64] = np.searchsorted(cdf, u * cdf[-1], side="right")
    return np.minimum(index, cdf.size - 1)


def held_out_p(grid: Grid, post: npt.NDArray[np.float64],
               batches: Sequence[tuple[float, float, int]]) -> float:
    """The smallest two-sided predictive p-value of ``batches`` ([(difficulty, correct,
    answered), …], not yet in ``post``); 1 without batches."""
    import numpy as np
    from scipy.stats import betabinom, binom

    if not batches:
        return 1.0
    u = np.random.default_rng(SEED).random(DRAWS)
    index = _sample(post, u)
    rho = grid.rho[np.unravel_index(index, grid.shape)[0]]
    ind = rho == 0
    c = 1 / rho[~ind] - 1
    smallest = 1.0
    for d, correct, n in batches:
        p = grid.draw(index, d)
        k = round(correct)  # a partial-credit total is placed at the nearest count
        low, high = np.empty_like(p), np.empty_like(p)
        low[ind], high[ind] = binom.cdf(k, n, p[ind]), binom.sf(k - 1, n, p[ind])
        a, b = p[~ind] * c, (1 - p[~ind]) * c
        low[~ind], high[~ind] = betabinom.cdf(k, n, a, b), betabinom.sf(k - 1, n, a, b)
        smallest = min(smallest, 2 * float(min(low.mean(), high.mean())))
    return min(1.0, smallest)
