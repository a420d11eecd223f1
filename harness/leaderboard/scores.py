"""Item-level scores and the statistics shared by the leaderboard and ``harness compare``.

**What a score is.** An item's score is the mean of its samples' scores over every template and
few-shot condition it was run under (so a 7-template item is one item, not 7). A task's accuracy
is the mean over its items' samples (every template and condition pooled; with the same number of
samples per item this is the mean of the item scores). A suite score is the mean of its tasks'
accuracies; the overall score is the mean of the suite scores. Board and compare both use
:func:`macro_scores`, so they agree on every suite number.

**Intervals** are score intervals (``harness.scoring.intervals``), stratified by bucket: a task's
accuracy is the sample-weighted mean of its buckets' accuracies, each bucket a proportion over
its items (every template of an item counted in that item, effective n), so a suite or overall
score is one weighted sum over every (task, bucket) stratum, and its interval is the MOVER
interval of that sum. The mean gap of an entry is the mean of its tasks' gaps with the MOVER
interval of that mean: over one task it is that task's own interval, as results.json has it.
Ranks are ranges read off the overall intervals (:func:`rank_ranges`).

**Tests.** The sign test over items (:func:`sign_test`) is McNemar's test when every item has one
binary sample, and its natural extension otherwise: items where A scores higher against items
where B does. p-values of a gap or of a difference between runs on different items invert the
same score interval that is shown (:func:`harness.scoring.intervals.p_value`). Multiple tests on
one page are corrected with Holm's step-down method (:func:`holm`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from harness.leaderboard.board_file import PairTest
from harness.scoring.intervals import (
    Limits,
    Proportion,
    Term,
    clustered_proportion,
    diff_interval,
    p_value,
    paired_diff_interval,
    sum_interval,
)
from harness.scoring.stats import Z95, r10

LEVEL = 0.95  # confidence level of every interval here
ALPHA = 0.05  # family-wise error rate of the Holm-corrected significance marks
EXACT_BELOW = 25  # discordant items below which the sign test's p-value is the exact binomial

Vec = npt.NDArray[np.float64]


class Sample(NamedTuple):
    """What the board keeps of one sample."""

    item: str  # item id
    score: float  # its score
    is_id: bool  # in an ID bucket
    bucket: str  # its bucket label
    digest: str  # sha256 of its template, condition, prompt and target (what makes it the same)


@dataclass(frozen=True)
class ItemScores:
    """One task's items as parallel arrays (item order sorted by id)."""

    ids: tuple[str, ...]  # item ids
    sums: Vec  # summed sample scores per item (every template and condition)
    counts: Vec  # samples per item
    is_id: npt.NDArray[np.bool_]  # item in an ID bucket
    buckets: tuple[str, ...] = ()  # each item's bucket label ("" when not known)
    digests: tuple[str, ...] = ()  # each item's samples' digests, joined in order

    @property
    def accuracy(self) -> float:
        """Mean over every sample of the task."""
        return float(self.sums.sum() / self.counts.sum())

    def item_means(self) -> Vec:
        """Each item's mean score over its samples."""
        return self.sums / self.counts

    def proportion(self) -> Proportion:
        """The task's accuracy as a proportion over its items (effective n)."""
        return clustered_proportion(self.sums.tolist(), self.counts.tolist())

    def strata(self, weight: float = 1.0) -> list[Term]:
        """The task's accuracy times ``weight`` as a sum over its buckets: each bucket's
        proportion weighted by its share of the samples, with its score interval."""
        labels = self.buckets or ("",) * len(self.ids)
        total = float(self.counts.sum())
        out = []
        for label in sorted(set(labels)):
            pick = np.array([b == label for b in labels])
            p = clustered_proportion(self.sums[pick].tolist(), self.counts[pick].tolist())
            lo, hi = p.limits()
            out.append(Term(weight * float(self.counts[pick].sum()) / total, p.mean, lo, hi))
        return out


def item_scores(samples: Sequence[Sample]) -> ItemScores:
    """Items from samples (any number per item)."""
    acc: dict[str, list[float]] = {}
    first: dict[str, Sample] = {}
    dig: dict[str, list[str]] = {}
    for s in samples:
        acc.setdefault(s.item, []).append(s.score)
        first.setdefault(s.item, s)
        dig.setdefault(s.item, []).append(s.digest)
    ids = tuple(sorted(acc))
    return ItemScores(ids, np.array([math.fsum(acc[i]) for i in ids], dtype=np.float64),
                      np.array([len(acc[i]) for i in ids], dtype=np.float64),
                      np.array([first[i].is_id for i in ids], dtype=np.bool_),
                      tuple(first[i].bucket for i in ids),
                      tuple("|".join(sorted(dig[i])) for i in ids))


def same_items(a: ItemScores, b: ItemScores) -> bool:
    """Whether two runs' items are identical sample for sample (ids, prompts, targets): only
    then may they be compared item by item."""
    return a.ids == b.ids and a.digests == b.digests and all(a.digests)


def macro_scores(task_acc: Mapping[str, float], suite_of: Mapping[str, str]
                 ) -> tuple[dict[str, float], float | None]:
    """Suite scores (mean task accuracy per suite) and overall (mean of suite scores)."""
    by: dict[str, list[float]] = {}
    for t, a in task_acc.items():
        by.setdefault(suite_of[t], []).append(a)
    suites = {s: math.fsum(v) / len(v) for s, v in by.items()}
    return suites, (math.fsum(suites.values()) / len(suites) if suites else None)


def macro_intervals(tasks: Mapping[str, ItemScores], suite_of: Mapping[str, str]
                    ) -> tuple[dict[str, Limits], Limits]:
    """Score intervals of the suite scores and the overall score (the definitions of
    ``macro_scores``), each a MOVER interval over the (task, bucket) strata it averages."""
    by: dict[str, list[str]] = {}
    for t in sorted(tasks):
        by.setdefault(suite_of[t], []).append(t)
    suites = {s: sum_interval([x for t in ts for x in tasks[t].strata(1.0 / len(ts))])
              for s, ts in by.items()}
    overall = sum_interval([x for ts in by.values() for t in ts
                            for x in tasks[t].strata(1.0 / (len(ts) * len(by)))])
    return suites, overall


def mean_interval(parts: Sequence[tuple[float, float, float]]) -> Limits:
    """MOVER interval of the mean of independent estimates ``(value, low, high)``: one part
    gives back its own interval."""
    k = len(parts)
    return sum_interval([Term(1.0 / k, v, lo, hi) for v, lo, hi in parts])


def rank_ranges(intervals: Mapping[str, Limits]) -> dict[str, tuple[int, int]]:
    """Each key's range of ranks (1 = best) read off the intervals: from 1 + the number of keys
    whose lower limit is above its upper limit (certainly better) to the number of keys minus
    those whose upper limit is below its lower limit (certainly worse)."""
    out = {}
    for k, (lo, hi) in intervals.items():
        better = sum(1 for j, (l2, _) in intervals.items() if j != k and l2 > hi)
        worse = sum(1 for j, (_, h2) in intervals.items() if j != k and h2 < lo)
        out[k] = (1 + better, len(intervals) - worse)
    return out


def pair_test(a: str, b: str, sa: ItemScores, sb: ItemScores) -> PairTest:
    """B − A on one task: paired over items (sign test, paired interval) when both ran exactly
    the same items, else as two independent samples (Newcombe's interval, inverted for p)."""
    diff = sb.accuracy - sa.accuracy
    if same_items(sa, sb):
        ma, mb = sa.item_means(), sb.item_means()
        a_better, b_better = int((ma > mb).sum()), int((mb > ma).sum())
        p, test = sign_test(a_better, b_better)
        lo, hi = paired_diff_interval(ma.tolist(), mb.tolist(), sa.counts.tolist())
        return PairTest(a=a, b=b, paired=True, n_items=len(sa.ids), n_items_b=len(sb.ids),
                        diff=r10(diff), ci_low=r10(lo), ci_high=r10(hi), a_better=a_better,
                        b_better=b_better, test=test, p=r10(p), p_holm=1.0)
    pa, pb = sa.proportion(), sb.proportion()
    lo, hi = diff_interval(pb, pa)
    return PairTest(a=a, b=b, paired=False, n_items=len(sa.ids), n_items_b=len(sb.ids),
                    diff=r10(diff), ci_low=r10(lo), ci_high=r10(hi), a_better=None,
                    b_better=None, test="newcombe",
                    p=r10(p_value(lambda lv: diff_interval(pb, pa, lv))), p_holm=1.0)


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
    """How far a Wilson 95% interval of n items can reach from its estimate: the farther end,
    at the worst of the accuracies n items can have (k/n). The interval is not symmetric away
    from 1/2, so this is a little more than its half-width at p = 0.5 (n = 93: 10.16 against
    9.96 points), and it is the reach docs/statistics.md states a precision by."""
    if n <= 0:
        return 1.0
    import numpy as np  # noqa: PLC0415

    k = np.arange(n + 1, dtype=np.float64)
    p = k / n
    z2 = z * z
    center = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * np.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    lo = np.where(p == 0, 0.0, np.maximum(0.0, center - half))
    hi = np.where(p == 1, 1.0, np.minimum(1.0, center + half))
    return float(np.max(np.maximum(p - lo, hi - p)))


def items_for(half_width: float, z: float = Z95) -> int:
    """Fewest items whose Wilson 95% interval reaches no farther than ``half_width`` from its
    estimate at any accuracy."""
    n = max(1, int((z / (2 * half_width)) ** 2) - 5)
    while worst_half_width(n, z) > half_width:
        n += 1
    return n
