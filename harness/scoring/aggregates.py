"""Accuracy per difficulty bucket and per role (ID / OOD), with Wilson 95% intervals.

Samples are matched to buckets by ``bucket_index``; a sample whose index, label or role does not
agree with the bucket list is an error (the samples and the buckets come from different tasks or
runs). Sums use ``math.fsum`` and reported floats pass through ``r10``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ConfigDict, Field

from harness.answers.budget import CUT_MATERIAL
from harness.scoring.baselines import is_constant
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10, wilson_interval
from harness.spec.buckets import Bucket, Role

ROLES: tuple[Role, ...] = ("ID", "OOD")


class BucketAggregate(BaseModel):
    """Accuracy in one difficulty bucket."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bucket: str  # bucket label, e.g. "7" or "6-10"
    index: int  # bucket position on the difficulty axis
    role: Role  # "ID" or "OOD"
    lo: float  # smallest difficulty value in the bucket (inclusive)
    hi: float  # per-value buckets: the value; range buckets: the upper edge (exclusive)
    n: int  # number of scored samples in the bucket
    correct: float  # sum of sample scores
    accuracy: float | None  # correct / n; None for an empty bucket
    ci_low: float | None  # Wilson 95% lower bound; None for an empty bucket
    ci_high: float | None  # Wilson 95% upper bound; None for an empty bucket
    baseline: float | None = None  # best constant answer's score on these items (scoring/baselines)
    floor: bool | None = None  # Wilson lower bound not above the baseline; None when empty
    concentration: float | None = None  # share of the model's most frequent answer
    constant: bool = False  # one answer makes up most answers (baselines.is_constant)
    cut: float | None = Field(  # share of the answers that stopped on the answer budget
        None, exclude_if=lambda v: v is None)  # (answers/budget); None: not one did
    budget_bound: bool = Field(  # wrong answers cut by the budget are at least CUT_MATERIAL
        False, exclude_if=lambda v: not v)  # of the answers: the score may be the budget's
    context_bound: bool = Field(  # wrong answers that ran out of the model's context are at
        False, exclude_if=lambda v: not v)  # least CUT_MATERIAL of the answers (answers/budget)
    looped: float | None = Field(  # share of the answers cut inside a loop (answers/budget):
        None, exclude_if=lambda v: not v)  # more room would only have made them longer


class RoleAggregate(BaseModel):
    """Accuracy pooled over the items of every bucket with one role."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role  # "ID" or "OOD"
    n: int  # number of scored samples with this role
    correct: float  # sum of sample scores
    accuracy: float | None  # correct / n; None when there are no samples
    ci_low: float | None  # Wilson 95% lower bound; None when there are no samples
    ci_high: float | None  # Wilson 95% upper bound; None when there are no samples
    baseline: float | None = None  # best single constant answer's score on the pooled items
    floor: bool | None = None  # Wilson lower bound not above the baseline; None when empty
    concentration: float | None = None  # share of the model's most frequent answer
    constant: bool = False  # one answer makes up most answers (baselines.is_constant)
    cut: float | None = Field(  # share of the answers that stopped on the answer budget
        None, exclude_if=lambda v: v is None)  # (answers/budget); None: not one did
    budget_bound: bool = Field(  # wrong answers cut by the budget are at least CUT_MATERIAL
        False, exclude_if=lambda v: not v)  # of the answers: the score may be the budget's
    context_bound: bool = Field(  # wrong answers that ran out of the model's context are at
        False, exclude_if=lambda v: not v)  # least CUT_MATERIAL of the answers (answers/budget)
    looped: float | None = Field(  # share of the answers cut inside a loop (answers/budget):
        None, exclude_if=lambda v: not v)  # more room would only have made them longer


_Summary = tuple[int, float, float | None, float | None, float | None]
_T = TypeVar("_T")


@dataclass(frozen=True)
class Level:
    """What a bucket's or a role's scores are judged against (``scoring/baselines``)."""

    baseline: float | None = None  # the best constant answer's score on the same items
    concentration: float | None = None  # share of the model's most frequent answer
    cut: float | None = None  # share of the answers that stopped on the answer budget
    lost: float | None = None  # share of the answers that did and scored below full marks
    context: float | None = None  # share lost to the model's context instead (answers/budget)
    looped: float | None = None  # share of the answers cut inside a loop (answers/budget)


def not_above(correct: float, n: int, baseline: float) -> bool:
    """The floor test: the Wilson 95% lower bound of ``correct / n`` is not above ``baseline``
    (a one-sided test at 2.5%, the same interval the tables show)."""
    lo, _ = wilson_interval(correct, n)
    return not r10(lo) > r10(baseline)


def _judged(n: int, correct: float, level: Level | None) -> dict[str, object]:
    """The baseline, floor, concentration and constant fields of one row."""
    if level is None:
        return {}
    base, share = level.baseline, level.concentration
    return {
        "baseline": None if base is None else r10(base),
        "floor": None if base is None or n == 0 else not_above(correct, n, base),
        "concentration": None if share is None else r10(share),
        "constant": is_constant(share, n),
        "cut": r10(level.cut) if level.cut else None,
        "budget_bound": level.lost is not None and level.lost >= CUT_MATERIAL,
        "context_bound": level.context is not None and level.context >= CUT_MATERIAL,
        "looped": r10(level.looped) if level.looped else None,
    }


def leading_run_end(rows: Iterable[_T], passes: Callable[[_T], bool]) -> _T | None:
    """The last of ``rows`` (buckets in difficulty order) in the leading run that ``passes``:
    the walk stops at the first that does not (None when the first fails). Both the
    extrapolation horizon and RULER's effective length are this walk."""
    last: _T | None = None
    for row in rows:
        if not passes(row):
            break
        last = row
    return last


def _summary(scores: Sequence[float]) -> _Summary:
    """(n, correct, accuracy, ci_low, ci_high), rounded for reporting."""
    n = len(scores)
    correct = math.fsum(scores)
    if n == 0:
        return (0, 0.0, None, None, None)
    lo, hi = wilson_interval(correct, n)
    return (n, r10(correct), r10(correct / n), r10(lo), r10(hi))


def bucket_position(s: SampleRecord, by_index: Mapping[int, int], buckets: Sequence[Bucket]
                    ) -> int:
    """The position in ``buckets`` of sample ``s``'s bucket (``by_index``: bucket index →
    position), checking that the sample's index, label and role agree with that bucket."""
    pos = by_index.get(s.bucket_index)
    if pos is None:
        raise ValueError(
            f"sample {s.id!r}: bucket_index {s.bucket_index} is not one of the task's buckets"
        )
    b = buckets[pos]
    if s.bucket != b.label or s.role != b.role:
        raise ValueError(
            f"sample {s.id!r}: bucket {s.bucket!r} ({s.role}) at index {s.bucket_index} does "
            f"not match the task's bucket {b.label!r} ({b.role})"
        )
    return pos


def metric_score(s: SampleRecord, metric: str | None) -> float:
    """The sample's score under ``metric``, one of the other metrics of its task's
    ``scoring.metrics`` (None: the primary metric's ``score``)."""
    if metric is None:
        return s.score
    value = s.scores.get(metric)
    if value is None:
        raise ValueError(f"sample {s.id!r}: no score for metric {metric!r} (its scores: "
                         f"{', '.join(s.scores) or 'none'})")
    return value


def scores_by_bucket(
    samples: Iterable[SampleRecord], buckets: Sequence[Bucket], metric: str | None = None
) -> list[list[float]]:
    """Sample scores grouped per bucket (in bucket order), checking samples against buckets
    (``metric``: another metric's scores, ``metric_score``; None: the primary's).

    Within a bucket, scores are ordered by item id, so anything computed from them (the seeded
    bootstrap included) does not depend on the order the samples were written in.
    """
    by_index = {b.index: pos for pos, b in enumerate(buckets)}
    keyed: list[list[tuple[str, float]]] = [[] for _ in buckets]
    for s in samples:
        keyed[bucket_position(s, by_index, buckets)].append((s.id, metric_score(s, metric)))
    return [[score for _, score in sorted(rows)] for rows in keyed]


def bucket_rows(
    per_bucket: Sequence[Sequence[float]], buckets: Sequence[Bucket],
    levels: Sequence[Level] | None = None,
) -> list[BucketAggregate]:
    """One row per bucket from each bucket's scores (as ``scores_by_bucket`` gives them) and,
    where given, each bucket's ``Level`` (baseline and answer concentration)."""
    rows: list[BucketAggregate] = []
    for pos, (b, scores) in enumerate(zip(buckets, per_bucket, strict=True)):
        n, correct, acc, lo, hi = _summary(scores)
        rows.append(
            BucketAggregate.model_validate({
                "bucket": b.label, "index": b.index, "role": b.role, "lo": b.lo, "hi": b.hi,
                "n": n, "correct": correct, "accuracy": acc, "ci_low": lo, "ci_high": hi,
                **_judged(n, correct, None if levels is None else levels[pos]),
            })
        )
    return rows


def aggregate_buckets(
    samples: Iterable[SampleRecord], buckets: Sequence[Bucket]
) -> list[BucketAggregate]:
    """One row per bucket, in bucket order, empty buckets included (n=0, accuracy None)."""
    return bucket_rows(scores_by_bucket(samples, buckets), buckets)


def _pooled(per_bucket: Sequence[Sequence[float]], buckets: Sequence[Bucket]
            ) -> dict[Role, list[float]]:
    pooled: dict[Role, list[float]] = {r: [] for r in ROLES}
    for b, scores in zip(buckets, per_bucket, strict=True):
        pooled[b.role].extend(scores)
    return pooled


def role_rows(
    per_bucket: Sequence[Sequence[float]], buckets: Sequence[Bucket],
    levels: Mapping[Role, Level] | None = None,
) -> list[RoleAggregate]:
    """ID then OOD rows from each bucket's scores; a role no bucket has is left out. ``levels``:
    each role's pooled baseline and answer concentration, where known."""
    present = {b.role for b in buckets}
    pooled = _pooled(per_bucket, buckets)
    rows: list[RoleAggregate] = []
    for role in ROLES:
        if role not in present:
            continue
        n, correct, acc, lo, hi = _summary(pooled[role])
        rows.append(RoleAggregate.model_validate({
            "role": role, "n": n, "correct": correct, "accuracy": acc, "ci_low": lo,
            "ci_high": hi, **_judged(n, correct, None if levels is None else levels.get(role)),
        }))
    return rows


def aggregate_roles(
    samples: Iterable[SampleRecord], buckets: Sequence[Bucket]
) -> list[RoleAggregate]:
    """ID then OOD, pooled over items; a role no bucket has is left out."""
    return role_rows(scores_by_bucket(samples, buckets), buckets)
