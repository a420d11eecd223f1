"""The built-in generalization gaps between in-distribution (ID) and out-of-distribution (OOD)
buckets.

The built-in gaps (registered with ``@gap``, see ``gaps/registry``):

- ``id_ood``: ``acc(ID) − acc(OOD)`` with Newcombe's hybrid score interval (MOVER with Wilson
  limits) for a difference of independent proportions.
- ``retention``: ``acc(OOD) / acc(ID)`` with the MOVER-R interval (Wilson limits) for a ratio;
  its upper end is unbounded when the ID lower limit is 0.
- ``edge`` (not registered: it comes with ``id_ood``): last ID bucket − first OOD bucket (the
  nearest buckets with samples on each side of the ID edge), with the same interval as
  ``id_ood``. The pooled gap also counts a fall *inside* the ID range (90% on one digit, 0% on
  five); the edge gap only a fall at the edge. It is the natural gap of a model trained from
  scratch on the ID range.
- ``horizon``: walking the buckets in order from the first, the last bucket whose accuracy stays at
  or above ``horizon_threshold × acc(ID)`` with every bucket before it doing the same; an empty
  bucket ends the walk. ``factor`` is that bucket's ``top`` over the largest ID ``top``
  (the extrapolation factor of the reference doc).

Accuracies are pooled over items. Both intervals are defined at 0/n and n/n and never have zero
width from finite data; scores that are not binary are handled by the effective-n rule of
``scoring/intervals`` (see that module and docs/statistics.md).

A gap only runs on a measurable report (not at the floor or ceiling): ``gaps/report`` decides
that and collects the gaps a task asks for into a ``GapReport``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harness.gaps.registry import GapContext, gap
from harness.scoring.aggregates import leading_run_end
from harness.scoring.intervals import Proportion, diff_interval, proportion, ratio_interval
from harness.scoring.stats import r10
from harness.spec.buckets import Bucket

LEVEL = 0.95  # confidence level of every gap CI
DIFF_METHOD = "newcombe-mover (exact Clopper-Pearson limits; effective n for non-binary scores)"
RATIO_METHOD = "mover-r (exact Clopper-Pearson limits; effective n for non-binary scores)"
GapStatus = Literal["measured", "floor", "ceiling"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class IdOodGap(_Model):
    """Absolute gap ``acc(ID) − acc(OOD)``."""

    value: float  # acc(ID) − acc(OOD), accuracies pooled over items
    ci_low: float  # lower bound of the score interval
    ci_high: float  # upper bound of the score interval
    n_id: int  # ID samples
    n_ood: int  # OOD samples
    level: float = LEVEL  # confidence level of the CI
    method: str = DIFF_METHOD  # how the CI was computed


class EdgeGap(_Model):
    """``acc(last ID bucket) − acc(first OOD bucket)``: the fall at the ID edge."""

    value: float  # accuracy of the last ID bucket − accuracy of the first OOD bucket
    ci_low: float  # lower bound of the score interval
    ci_high: float  # upper bound of the score interval
    id_bucket: str  # label of the last ID bucket with samples
    ood_bucket: str  # label of the first OOD bucket with samples
    n_id: int  # samples in that ID bucket
    n_ood: int  # samples in that OOD bucket
    level: float = LEVEL  # confidence level of the CI
    method: str = DIFF_METHOD  # how the CI was computed


class Retention(_Model):
    """Retention ``acc(OOD) / acc(ID)`` (1.0: no loss out of distribution)."""

    value: float | None  # acc(OOD) / acc(ID); None when acc(ID) is 0
    ci_low: float | None  # lower bound of the score interval; None when not estimable
    ci_high: float | None  # upper bound; None when not estimable or unbounded
    unbounded_high: bool = False  # the ID accuracy's lower limit is 0: no upper bound
    n_id: int  # ID samples
    n_ood: int  # OOD samples
    level: float = LEVEL  # confidence level of the CI
    method: str = RATIO_METHOD  # how the CI was computed


class Horizon(_Model):
    """How far along the difficulty axis accuracy stays near its ID level."""

    threshold: float  # absolute accuracy to keep: horizon_threshold × acc(ID)
    value: float | None  # `top` of the last bucket of the passing run; None if the first fails
    factor: float | None  # value / max_id_difficulty; None when value is None
    max_id_difficulty: float  # largest difficulty (`top`) of any ID bucket
    last_bucket: str | None  # label of the last bucket of the passing run


def _mean(x: Sequence[float]) -> float:
    return math.fsum(x) / len(x)


def _opt(x: float) -> float | None:
    return None if not math.isfinite(x) else r10(x)


def horizon(
    per_bucket: Sequence[Sequence[float]], buckets: Sequence[Bucket], id_accuracy: float,
    fraction: float,
) -> Horizon:
    """The horizon over ``buckets`` given each bucket's scores and the pooled ID accuracy.

    With an ID accuracy of 0 every bucket trivially "keeps" it, so no horizon is given (None).
    """
    threshold = r10(fraction * id_accuracy)
    max_id = max(b.top for b in buckets if b.role == "ID")
    last: Bucket | None = None
    if id_accuracy > 0:
        run = leading_run_end(zip(buckets, per_bucket, strict=True),
                              lambda bs: bool(bs[1]) and r10(_mean(bs[1])) >= threshold)
        last = None if run is None else run[0]
    value = None if last is None else last.top
    factor = None if value is None or max_id == 0 else r10(value / max_id)
    return Horizon(
        threshold=threshold, value=value, factor=factor, max_id_difficulty=max_id,
        last_bucket=None if last is None else last.label,
    )


def role_proportions(ctx: GapContext) -> tuple[Proportion, Proportion]:
    """The pooled ID and OOD scores of a report as proportions (one score per item)."""
    return proportion(ctx.ids), proportion(ctx.oods)


@gap("id_ood", title="gap", headline=0, better="none", board="mean")
def id_ood_gap(ctx: GapContext) -> IdOodGap | None:
    """acc(ID) − acc(OOD) with Newcombe's hybrid score 95% CI (needs ID and OOD samples)."""
    ids, oods = ctx.ids, ctx.oods
    if not ids or not oods:
        return None
    lo, hi = diff_interval(*role_proportions(ctx))
    return IdOodGap(value=r10(_mean(ids) - _mean(oods)), ci_low=r10(lo), ci_high=r10(hi),
                    n_id=len(ids), n_ood=len(oods))


def edge_gap(ctx: GapContext) -> EdgeGap | None:
    """The last ID bucket with samples minus the first OOD bucket with samples, with the ID−OOD
    gap's interval; None when either side has none, when an OOD bucket lies below the ID
    range, or when the task says its buckets have no single edge (``gaps.edge: false``)."""
    if not ctx.spec.edge:
        return None
    pairs = list(zip(ctx.buckets, ctx.per_bucket, strict=True))
    last_id = [(b, s) for b, s in pairs if b.role == "ID" and s]
    first_ood = [(b, s) for b, s in pairs if b.role == "OOD" and s]
    if not last_id or not first_ood or last_id[-1][0].index > first_ood[0][0].index:
        return None  # no edge: a side without samples, or OOD buckets below the ID range
    (bi, si), (bo, so) = last_id[-1], first_ood[0]
    lo, hi = diff_interval(proportion(si), proportion(so))
    return EdgeGap(value=r10(_mean(si) - _mean(so)), ci_low=r10(lo), ci_high=r10(hi),
                   id_bucket=bi.label, ood_bucket=bo.label, n_id=len(si), n_ood=len(so))


@gap("retention", headline=1, better="high", board="role_ratio")
def retention_gap(ctx: GapContext) -> Retention | None:
    """acc(OOD) / acc(ID) with the MOVER-R 95% CI (needs ID and OOD samples)."""
    ids, oods = ctx.ids, ctx.oods
    if not ids or not oods:
        return None
    acc_id = _mean(ids)
    pid, pood = role_proportions(ctx)
    lo, hi = ratio_interval(pood, pid)
    return Retention(value=None if acc_id == 0 else r10(_mean(oods) / acc_id),
                     ci_low=_opt(lo), ci_high=_opt(hi), unbounded_high=hi == math.inf,
                     n_id=len(ids), n_ood=len(oods))


@gap("horizon", headline=2, better="high", board="mean")
def horizon_gap(ctx: GapContext) -> Horizon | None:
    """How far along the difficulty axis accuracy keeps horizon_threshold × acc(ID), as a
    multiple of the largest ID difficulty too (needs ID samples)."""
    if not ctx.ids:
        return None
    return horizon(ctx.per_bucket, ctx.buckets, ctx.id_accuracy, ctx.spec.horizon_threshold)
