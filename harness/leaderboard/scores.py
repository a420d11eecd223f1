"""Item-level scores and the statistics shared by the leaderboard and ``harness compare``.

**What a score is.** An item's score is the mean of its samples' scores over every template and
few-shot condition it was run under (so a 7-template item is one item, not 7). A task's accuracy
is the mean over its items' samples (every template and condition pooled; with the same number of
samples per item this is the mean of the item scores). A suite score is the mean of its tasks'
accuracies; the overall score is the mean of the suite scores. Board and compare both use
:func:`macro_scores`, so they agree on every suite number.

**Intervals.** A bootstrap across tasks resamples items with replacement *within each task*
(tasks independent, every template of an item moving with it), recomputes the suite and overall
scores, and reads 95% percentile intervals. Seeded (numpy ``default_rng``), so deterministic.

**Tests.** The sign test over items (:func:`sign_test`) is McNemar's test when every item has one
binary sample, and its natural extension otherwise: items where A scores higher against items
where B does. Multiple tests on one page are corrected with Holm's step-down method
(:func:`holm`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from harness.scoring.stats import Z95, resampled_sums

LEVEL = 0.95  # confidence level of every interval here
ALPHA = 0.05  # family-wise error rate of the Holm-corrected significance marks
EXACT_BELOW = 25  # discordant items below which the sign test's p-value is the exact binomial

Vec = npt.NDArray[np.float64]


@dataclass(frozen=True)
class ItemScores:
    """One task's items as parallel arrays (item order sorted by id)."""

    ids: tuple[str, ...]  # item ids
    sums: Vec  # summed sample scores per item (every template and condition)
    counts: Vec  # samples per item
    is_id: npt.NDArray[np.bool_]  # item in an ID bucket

    @property
    def accuracy(self) -> float:
        """Mean over every sample of the task."""
        return float(self.sums.sum() / self.counts.sum())

    def item_means(self) -> Vec:
        """Each item's mean score over its samples."""
        return self.sums / self.counts


def item_scores(samples: Sequence[tuple[str, float, bool]]) -> ItemScores:
    """Items from ``(item id, score, is_ID)`` samples (any number per item)."""
    acc: dict[str, list[float]] = {}
    role: dict[str, bool] = {}
    for item, score, is_id in samples:
        acc.setdefault(item, []).append(score)
        role[item] = is_id
    ids = tuple(sorted(acc))
    return ItemScores(ids, np.array([math.fsum(acc[i]) for i in ids], dtype=np.float64),
                      np.array([len(acc[i]) for i in ids], dtype=np.float64),
                      np.array([role[i] for i in ids], dtype=np.bool_))


def macro_scores(task_acc: Mapping[str, float], suite_of: Mapping[str, str]
                 ) -> tuple[dict[str, float], float | None]:
    """Suite scores (mean task accuracy per suite) and overall (mean of suite scores)."""
    by: dict[str, list[float]] = {}
    for t, a in task_acc.items():
        by.setdefault(suite_of[t], []).append(a)
    suites = {s: math.fsum(v) / len(v) for s, v in by.items()}
    return suites, (math.fsum(suites.values()) / len(suites) if suites else None)


def task_resamples(tasks: Mapping[str, ItemScores], seed: int, resamples: int
                   ) -> dict[str, Vec]:
    """Bootstrap accuracies of every task (items resampled within the task; tasks in name
    order from one seeded stream)."""
    rng = np.random.default_rng(seed)
    out = {}
    for name in sorted(tasks):
        s, c = resampled_sums(rng, [tasks[name].sums, tasks[name].counts], resamples)
        out[name] = s / c
    return out


def macro_resamples(per_task: Mapping[str, Vec], suite_of: Mapping[str, str]
                    ) -> tuple[dict[str, Vec], Vec]:
    """Suite and overall scores of every resample (the same definition as macro_scores)."""
    by: dict[str, list[Vec]] = {}
    for t in sorted(per_task):
        by.setdefault(suite_of[t], []).append(per_task[t])
    suites = {s: np.mean(np.stack(v), axis=0) for s, v in by.items()}
    return suites, np.mean(np.stack(list(suites.values())), axis=0)


def bootstrap_p(stat: Vec) -> float:
    """Two-sided bootstrap p-value of ``stat = 0``: twice the smaller tail at 0 (at most 1)."""
    below = float(np.count_nonzero(stat <= 0)) / stat.size
    above = float(np.count_nonzero(stat >= 0)) / stat.size
    return min(1.0, 2.0 * min(below, above))


def rank_ranges(overall: Mapping[str, Vec], level: float = LEVEL
                ) -> dict[str, tuple[int, int]]:
    """Each key's 95% range of ranks (1 = best) over the resamples (ties share the best)."""
    keys = sorted(overall)
    m = np.stack([overall[k] for k in keys])  # keys × resamples
    ranks = 1 + (m[None, :, :] > m[:, None, :]).sum(axis=1)  # ranks[i, r]: 1 + number better
    alpha = (1.0 - level) / 2.0
    out = {}
    for i, k in enumerate(keys):
        lo, hi = np.quantile(ranks[i], [alpha, 1.0 - alpha], method="nearest")
        out[k] = (int(lo), int(hi))
    return out


def sign_test(a_better: int, b_better: int) -> tuple[float, str]:
    """Two-sided p-value of items where A scores higher (``a_better``) against items where B
    does, and the test used: exact binomial below 25 such items, else chi-square with
    continuity correction (McNemar's test when every item has one binary sample)."""
    n = a_better + b_better
    if n == 0:
        return 1.0, "none"
    if n < EXACT_BELOW:
        tail = sum(math.comb(n, k) for k in range(min(a_better, b_better) + 1))
        return min(1.0, 2 * tail / 2**n), "exact-binomial"
    stat = (abs(a_better - b_better) - 1) ** 2 / n
    return math.erfc(math.sqrt(stat / 2)), "chi2-continuity"


def two_proportion_p(k1: float, n1: int, k2: float, n2: int) -> float | None:
    """Two-sided p-value of equal proportions k1/n1 and k2/n2 (pooled z-test); None when
    either group is empty. Both at 0% or both at 100% gives 1."""
    if n1 == 0 or n2 == 0:
        return None
    p = (k1 + k2) / (n1 + n2)
    se = math.sqrt(p * (1 - p) * (1 / n1 + 1 / n2))
    if se == 0:
        return 1.0
    z = abs(k1 / n1 - k2 / n2) / se
    return math.erfc(z / math.sqrt(2))


def holm(p: Sequence[float | None]) -> list[float | None]:
    """Holm step-down adjusted p-values (None entries are not tests and stay None)."""
    idx = sorted((i for i, x in enumerate(p) if x is not None), key=lambda i: (p[i], i))
    m = len(idx)
    out: list[float | None] = [None] * len(p)
    running = 0.0
    for r, i in enumerate(idx):
        val = p[i]
        assert val is not None
        running = max(running, min(1.0, (m - r) * val))
        out[i] = running
    return out


def worst_half_width(n: int, z: float = Z95) -> float:
    """Largest Wilson 95% half-width over every accuracy for n items (at p = 0.5)."""
    if n <= 0:
        return 1.0
    return z * math.sqrt(0.25 / n + z * z / (4 * n * n)) / (1 + z * z / n)


def items_for(half_width: float, z: float = Z95) -> int:
    """Fewest items whose Wilson 95% interval is within ±``half_width`` at any accuracy."""
    n = max(1, int((z / (2 * half_width)) ** 2) - 5)
    while worst_half_width(n, z) > half_width:
        n += 1
    return n
