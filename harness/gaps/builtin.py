"""Generalization gaps between in-distribution (ID) and out-of-distribution (OOD) buckets: the
built-in gaps, and the report of every gap a task asks for (``gaps.report``).

The built-in gaps (registered with ``@gap``, see ``gaps/registry``):

- ``id_ood``: ``acc(ID) − acc(OOD)`` with Newcombe's hybrid score interval (MOVER with Wilson
  limits) for a difference of independent proportions.
- ``retention``: ``acc(OOD) / acc(ID)`` with the MOVER-R interval (Wilson limits) for a ratio;
  its upper end is unbounded when the ID lower limit is 0.
- ``horizon``: walking the buckets in order from the first, the last bucket whose accuracy stays at
  or above ``horizon_threshold × acc(ID)`` with every bucket before it doing the same; an empty
  bucket ends the walk. ``factor`` is that bucket's ``top`` over the largest ID ``top``
  (the extrapolation factor of the reference doc).

Accuracies are pooled over items. Both intervals are defined at 0/n and n/n and never have zero
width from finite data; scores that are not binary are handled by the effective-n rule of
``scoring/intervals`` (see that module and docs/statistics.md).

A gap is only a number where it is measurable (``status``): at the **floor**, when the pooled ID
accuracy is not significantly above chance (its Wilson 95% lower bound is not above the chance
level: 0 for generation, the mean of 1/k over ID items for k-way multiple choice), the model has
nothing to lose out of distribution, and at the **ceiling**, when both roles are at 100%, nothing
can be lost either: then no gap is reported (None), with the reason. This is decided once per
report, before any gap runs.

These three have a field of their own in ``GapReport`` (and in results.json); any other
registered gap's model is stored as its JSON under ``GapReport.extra``, which results.json omits
while it is empty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from harness.errors import HarnessError
from harness.gaps.registry import GapContext, gap, get_gap
from harness.scoring.aggregates import leading_run_end, scores_by_bucket
from harness.scoring.intervals import Proportion, diff_interval, proportion, ratio_interval
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10, wilson_interval
from harness.spec.buckets import Bucket
from harness.spec.task import GapsSpec

LEVEL = 0.95  # confidence level of every gap CI
DIFF_METHOD = "newcombe-mover (exact Clopper-Pearson limits; effective n for non-binary scores)"
RATIO_METHOD = "mover-r (exact Clopper-Pearson limits; effective n for non-binary scores)"
GapStatus = Literal["measured", "floor", "ceiling"]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _sparse() -> Any:
    """A mapping field that is empty by default and left out of the JSON while empty (a report
    of the built-in gaps only keeps the JSON it always had)."""
    return Field(default_factory=dict, exclude_if=lambda value: not value)


class IdOodGap(_Model):
    """Absolute gap ``acc(ID) − acc(OOD)``."""

    value: float  # acc(ID) − acc(OOD), accuracies pooled over items
    ci_low: float  # lower bound of the score interval
    ci_high: float  # upper bound of the score interval
    n_id: int  # ID samples
    n_ood: int  # OOD samples
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


class GapReport(_Model):
    """The gaps a task asked for (``gaps.report``); one not asked for, not computable or not
    measurable (``status`` floor or ceiling) is None."""

    status: GapStatus = "measured"  # floor: ID not above chance; ceiling: both roles at 100%
    chance: float = 0.0  # chance level of the pooled ID items (0 for generation, mean 1/k for MC)
    reason: str | None = None  # why no gap is reported when status is not "measured"
    id_ood: IdOodGap | None = None  # absolute ID − OOD gap
    retention: Retention | None = None  # OOD / ID accuracy ratio
    horizon: Horizon | None = None  # extrapolation horizon
    extra: dict[str, dict[str, Any]] = _sparse()  # any other registered gap → its model's JSON


# the gaps with a field of their own in GapReport; any other goes under GapReport.extra
_OWN_FIELD = ("id_ood", "retention", "horizon")


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


def measurability(
    ids: Sequence[float], oods: Sequence[float], chance: float
) -> tuple[GapStatus, str | None]:
    """Whether gaps between these pooled ID and OOD scores mean anything (see module)."""
    if not ids:
        return "measured", None
    lo, _ = wilson_interval(math.fsum(ids), len(ids))
    if not r10(lo) > r10(chance):
        return "floor", (f"ID accuracy {100 * _mean(ids):.1f}% (n={len(ids)}, 95% CI from "
                         f"{100 * lo:.1f}%) is not above chance ({100 * chance:.1f}%)")
    if oods and min(ids) >= 1.0 and min(oods) >= 1.0:
        return "ceiling", f"ID and OOD both at 100% (n={len(ids)} and {len(oods)})"
    return "measured", None


def value_and_ci(d: dict[str, Any]) -> tuple[float | None, float | None, float | None]:
    """``value``, ``ci_low`` and ``ci_high`` of a gap's JSON (``GapReport.extra``); a field that is
    missing or not a number is None."""
    return _number(d.get("value")), _number(d.get("ci_low")), _number(d.get("ci_high"))


def _number(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def compute_gaps(
    samples: Sequence[SampleRecord], buckets: Sequence[Bucket], spec: GapsSpec, seed: int
) -> GapReport:
    """The gaps in ``spec.report``; ``seed`` seeds their shared bootstrap (derive it per
    task/template). The chance level comes from the ID samples' choices.
    """
    chance = chance_level([s for s in samples if s.role == "ID"])
    return gaps_from_scores(scores_by_bucket(samples, buckets), buckets, spec, seed, chance)


def chance_level(samples: Sequence[SampleRecord]) -> float:
    """Mean chance of a right answer: 1/k for a k-way choice, 0 for generation."""
    if not samples:
        return 0.0
    return math.fsum(sample_chance(s) for s in samples) / len(samples)


def sample_chance(s: SampleRecord) -> float:
    """1/k for a sample with k choices, 0 for a generated answer."""
    return 1.0 / len(s.choices) if s.choices else 0.0


def gaps_from_scores(
    per_bucket: Sequence[Sequence[float]], buckets: Sequence[Bucket], spec: GapsSpec, seed: int,
    chance: float = 0.0,
) -> GapReport:
    """``compute_gaps`` from each bucket's scores (in item-id order, as ``scores_by_bucket``
    gives them) and the ID items' chance level: the measurability first, then, on a measurable
    report, every gap of ``spec.report`` in turn (a gap that cannot be computed is None)."""
    ctx = GapContext(per_bucket, buckets, spec, seed, chance)
    status, reason = measurability(ctx.ids, ctx.oods, chance)
    if status != "measured":
        return GapReport(status=status, chance=r10(chance), reason=reason)
    fields: dict[str, Any] = {"chance": r10(chance)}
    extra: dict[str, dict[str, Any]] = {}
    for name in spec.report:
        model = get_gap(name)(ctx)
        if model is None:
            continue
        if name in _OWN_FIELD:
            fields[name] = model
            continue
        extra[name] = model.model_dump(mode="json")
        if "value" not in extra[name]:
            raise HarnessError(f"gap {name!r}: its model {type(model).__name__} has no field "
                               "'value' (the number a leaderboard shows)")
    return GapReport.model_validate({**fields, "extra": extra})


def role_proportions(ctx: GapContext) -> tuple[Proportion, Proportion]:
    """The pooled ID and OOD scores of a report as proportions (one score per item)."""
    return proportion(ctx.ids), proportion(ctx.oods)


@gap("id_ood", title="gap", headline=0, better="low", board="mean")
def id_ood_gap(ctx: GapContext) -> IdOodGap | None:
    """acc(ID) − acc(OOD) with Newcombe's hybrid score 95% CI (needs ID and OOD samples)."""
    ids, oods = ctx.ids, ctx.oods
    if not ids or not oods:
        return None
    lo, hi = diff_interval(*role_proportions(ctx))
    return IdOodGap(value=r10(_mean(ids) - _mean(oods)), ci_low=r10(lo), ci_high=r10(hi),
                    n_id=len(ids), n_ood=len(oods))


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
