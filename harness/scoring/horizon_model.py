"""The horizon's curve model: the grid a d50 posterior lives on and the likelihood of a batch.

A model's accuracy at difficulty d is

    p(d) = γ + (1 − γ − λ) · S_k((ln d − ln d50) / σ),

with γ the item baseline (fixed), 1 − λ the accuracy on easy items, σ the fall's width in ln
units and S_k one of three survival shapes, each equal to 1/2 at 0 so that d50 is always the
halfway point between 1 − λ and γ, and each with the normal's slope there:

- ``normal``: Φ(−z), a symmetric fall in ln d;
- ``late``: 2^(−e^(cz)), accuracy a Weibull survival in d: it holds, then collapses;
- ``early``: 1 − 2^(−e^(−cz)), the mirror in ln d: it falls at once, then tails off slowly.

The answers of one round at one difficulty form one **batch** (and the ID answers of each ID
difficulty one batch). A batch's count is beta-binomial: its own accuracy is drawn from a beta
with mean p(d) and intra-class correlation ρ, so the count's variance is n p (1 − p)
(1 + (n − 1) ρ), psignifit 4's overdispersion with ρ = η² (Schütt et al. 2016). ρ = 0 is the
binomial. The posterior runs over the grid (ρ, ln d50, σ, λ, shape) with flat priors on the
grid points of each axis but ρ, whose prior leans to independence (``RHO_PRIOR``): the shape and
ρ are integrated over (model averaging by posterior weight).

Each batch adds its beta-binomial log-likelihood to the log posterior (constants common to
every grid point dropped). For ρ > 0 it is tabulated on a fine grid of logit p with the exact
log gamma function and read off by linear interpolation (error under 1e-3 nats at the counts a
search collects); ρ = 0 is exact.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Array = npt.NDArray[np.float64]

SHAPES = ("normal", "late", "early")  # the fall's lean (see module)
LEAN = 0.3989422804014327 / (0.5 * math.log(2.0))  # c: each shape's slope at 0 is the normal's
RHO = (0.0, 0.02, 0.06, 0.15, 0.3, 0.45)  # intra-class correlation of a batch (grid)
# prior weight of each ρ: most batches are close to independent, strong correlation is rarer
RHO_PRIOR = (0.4, 0.2, 0.15, 0.12, 0.08, 0.05)
MARGIN = math.log(4.0)  # the d50 grid reaches this far past each end of the range (ln units)
MU_STEPS, SIGMA_STEPS, LAPSE_STEPS = 128, 14, 20
SIGMA_RANGE = (0.01, 3.0)  # σ in ln units: a step (between adjacent candidates) to a slow fall
P_CLIP = 1e-9  # accuracies are kept inside [P_CLIP, 1 − P_CLIP]
U_MAX = math.log((1 - P_CLIP) / P_CLIP)  # logit range of the interpolation table
U_STEPS = 4097


def survival(shape: int, z: Array) -> Array:
    """S_k(z) of shape ``shape`` (index into SHAPES): the share of the fall not yet taken."""
    import numpy as np
    from scipy.special import erfc

    with np.errstate(over="ignore", under="ignore"):
        if shape == 0:
            return 0.5 * erfc(z / math.sqrt(2.0))  # type: ignore[no-any-return]
        if shape == 1:
            return np.exp(-math.log(2.0) * np.exp(LEAN * z))
        return -np.expm1(-math.log(2.0) * np.exp(-LEAN * z))


def fitted_accuracy(d: float, d50: float, spread: float, top: float, baseline: float,
                    shapes: Sequence[float] = ()) -> float:
    """The fitted curve at ``d``: the shapes averaged by their weights (none: the normal)."""
    import numpy as np

    weights = list(shapes) or [1.0]
    z = np.array([(math.log(d) - math.log(d50)) / spread])
    left = sum(w * float(survival(k, z)[0]) for k, w in enumerate(weights)) / sum(weights)
    return baseline + (top - baseline) * left


class Grid:
    """The parameter grid of one search: ln d50 (ascending), σ, λ, shape, ρ."""

    def __init__(self, lo: int, hi: int, baseline: float) -> None:
        import numpy as np

        self.baseline = baseline
        self.log_d50 = np.linspace(math.log(lo) - MARGIN, math.log(hi) + MARGIN, MU_STEPS)
        self.sigma = np.geomspace(*SIGMA_RANGE, SIGMA_STEPS)
        room = 1.0 - baseline  # λ from 0 (top 1) to all the room above the baseline (top = γ)
        self.lapse = np.linspace(0.0, room * (1 - 1e-3), LAPSE_STEPS)
        self.rho = np.array(RHO)
        self.u = np.linspace(-U_MAX, U_MAX, U_STEPS)  # logit p of the interpolation table
        pu = 1 / (1 + np.exp(-self.u))
        self._pu, self._qu = pu, 1 - pu
        self._c = 1 / self.rho[1:] - 1  # beta precision a + b of each ρ > 0
        self._cache: dict[float, tuple[Array, Array, Array, npt.NDArray[np.int64], Array]] = {}

    @property
    def shape(self) -> tuple[int, int, int, int, int]:
        """(ρ, ln d50, σ, λ, shape) axis lengths of the posterior."""
        return (len(RHO), MU_STEPS, SIGMA_STEPS, LAPSE_STEPS, len(SHAPES))

    def log_prior(self) -> Array:
        """The log prior over the grid: flat but for ρ (``RHO_PRIOR``)."""
        import numpy as np

        return np.zeros(self.shape) + np.log(RHO_PRIOR)[:, None, None, None, None]

    def posterior(self, batches: Sequence[tuple[float, float, int]]) -> Array:
        """The normalised posterior of ``batches`` ([(difficulty, correct, answered), …])."""
        logpost = self.log_prior()
        for d, c, n in batches:
            logpost += self.loglik(d, c, n)
        return normalised(logpost)

    def accuracy(self, d: float) -> Array:
        """p(d) over (ln d50, σ, λ, shape), clipped into (0, 1)."""
        return self._at(d)[0]

    def _at(self, d: float) -> tuple[Array, Array, Array, npt.NDArray[np.int64], Array]:
        """p(d), ln p, ln(1 − p), and where logit p falls in the table (cell, weight); kept
        per difficulty, since a search returns to the same ones."""
        import numpy as np

        got = self._cache.get(d)
        if got is None:
            z = (math.log(d) - self.log_d50[:, None]) / self.sigma[None, :]
            surv = np.stack([survival(k, z) for k in range(len(SHAPES))], axis=-1)
            top = (1 - self.baseline - self.lapse)[None, None, :, None]
            p = np.clip(self.baseline + top * surv[:, :, None, :], P_CLIP, 1 - P_CLIP)
            lp, lq = np.log(p), np.log1p(-p)
            pos = (lp - lq + U_MAX) * ((U_STEPS - 1) / (2 * U_MAX))
            i = np.clip(pos.astype(np.int64), 0, U_STEPS - 2)
            got = (p, lp, lq, i, pos - i)
            self._cache[d] = got
        return got

    def loglik(self, d: float, k: float, n: int) -> Array:
        """The log-likelihood of one batch, ``k`` of ``n`` right at ``d``, at every grid point:
        shape (ρ, ln d50, σ, λ, shape)."""
        import numpy as np

        p, lp, lq, i, w = self._at(d)
        out = np.empty((len(RHO),) + p.shape)
        out[0] = k * lp + (n - k) * lq
        table = self._bb(k, n)  # (ρ > 0, U_STEPS)
        step = np.diff(table, axis=1)
        for r in range(len(RHO) - 1):  # row by row: np.take is far faster than 2-D indexing
            np.multiply(step[r].take(i), w, out=out[r + 1])
            out[r + 1] += table[r].take(i)
        return out

    def _bb(self, k: float, n: int) -> Array:
        """The beta-binomial log-likelihood of ``k`` of ``n`` at each ρ > 0 (rows) and logit
        table point (columns), without the binomial coefficient (the same at every point)."""
        import numpy as np
        from scipy.special import gammaln

        if n <= 0:
            return np.zeros((len(self._c), U_STEPS))
        c = self._c[:, None]
        a, b = self._pu[None, :] * c, self._qu[None, :] * c
        return (gammaln(k + a) - gammaln(a) + gammaln(n - k + b) - gammaln(b)  # type: ignore[no-any-return]
                - gammaln(n + c) + gammaln(c))

    def log_crossing(self, level: float) -> Array:
        """ln d where the curve is down to ``level`` × its easy-item accuracy (NoLiMa's
        effective length at 0.85), at every (ln d50, σ, λ, shape); NaN where that level lies
        at or below the baseline (no such difficulty)."""
        import numpy as np
        from scipy.special import ndtri

        top = (1 - self.lapse)[None, None, :]
        with np.errstate(divide="ignore", invalid="ignore"):
            q = (level * top - self.baseline) / (top - self.baseline)  # S_k at the crossing
            q = np.where((q > 0) & (q < 1), q, np.nan)
            z = np.stack([ndtri(1 - q),  # normal: Φ(−z) = q
                          np.log(-np.log(q) / math.log(2.0)) / LEAN,  # late
                          -np.log(-np.log1p(-q) / math.log(2.0)) / LEAN], axis=-1)  # early
        return (self.log_d50[:, None, None, None]  # type: ignore[no-any-return]
                + self.sigma[None, :, None, None] * z)

    def draw(self, index: npt.NDArray[np.int64], d: float) -> Array:
        """p(d) of the flat posterior indices ``index`` (one value per index)."""
        import numpy as np

        r, m, s, lam, k = np.unravel_index(index, self.shape)
        z = (math.log(d) - self.log_d50[m]) / self.sigma[s]
        surv = np.choose(k, [survival(j, z) for j in range(len(SHAPES))])
        p = self.baseline + (1 - self.baseline - self.lapse[lam]) * surv
        return np.clip(p, P_CLIP, 1 - P_CLIP)  # type: ignore[no-any-return]


def normalised(logpost: Array) -> Array:
    """A posterior from its log: cells below e^-575 of the mode count as 0, so no subnormal
    numbers go downstream (arithmetic on them is a hundred times slower) and no visible mass is
    lost."""
    import numpy as np

    rel = logpost - logpost.max()
    post = np.exp(np.maximum(rel, -700.0))
    post[rel < -575.0] = 0.0
    out: Array = post / post.sum()
    return out
