"""The ID−OOD gap split into **difficulty** and **exemplar shift**, from a matched-exemplar control.

An OOD item answered with ID exemplars differs from an ID item in two ways: it is harder (longer,
more digits, a new combination) and its exemplars come from another distribution. The
matched-exemplar control answers the same OOD items again with exemplars from each item's own
bucket (few-shot condition ``matched``). Then, per template:

- **shift** = acc(OOD | matched) − acc(OOD | ID exemplars), paired on identical items
  (``scoring/intervals.paired_diff_interval``): what the exemplars' distance costs. Positive
  means matched exemplars help, so the shift cost part of the gap.
- **difficulty** = acc(ID) − acc(OOD | matched), two independent samples (Newcombe's MOVER on
  exact limits, as ``id_ood``): what is left when the exemplars match.
- gap = difficulty + shift exactly (the estimates; each part has its own interval).

Hase et al. (2024, arXiv:2401.06751) read easy→hard supervision this way with an oracle
condition (hard exemplars for hard items); this makes that reading available to every task with
exemplars. The split is given per OOD bucket too. Like every gap it is not reported at the floor
or ceiling of the ID-exemplar report.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.gaps.builtin import LEVEL, GapStatus
from harness.scoring.intervals import diff_interval, paired_diff_interval, proportion
from harness.scoring.stats import r10
from harness.spec.buckets import Bucket

MATCHED = "matched"  # the condition id of the matched-exemplar control
PAIRED_METHOD = "paired MOVER of the items where each condition is ahead (exact limits)"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Part(_Model):
    """One estimate with its interval (accuracy points as fractions)."""

    value: float  # the estimate
    ci_low: float  # lower bound of the 95% interval
    ci_high: float  # upper bound of the 95% interval


class BucketShift(_Model):
    """One OOD bucket under both exemplar conditions, on the same items."""

    bucket: str  # bucket label
    n: int  # items answered under both conditions
    base: float  # accuracy with ID exemplars
    matched: float  # accuracy with exemplars from this bucket
    shift: Part  # matched − base, paired on the items


class ShiftSplit(_Model):
    """``gap = difficulty + shift`` for one template (see module)."""

    template: str  # prompt template id
    base: str = ""  # condition id of the ID-exemplar answers
    matched: str = MATCHED  # condition id of the matched-exemplar answers
    status: GapStatus  # of the ID-exemplar report: no split at the floor or ceiling
    gap: Part | None  # acc(ID) − acc(OOD | ID exemplars): the id_ood gap
    difficulty: Part | None  # acc(ID) − acc(OOD | matched), independent samples
    shift: Part | None  # acc(OOD | matched) − acc(OOD | ID exemplars), paired
    n_id: int  # ID items
    n_ood: int  # OOD items answered under both conditions
    buckets: list[BucketShift]  # per OOD bucket
    level: float = LEVEL  # confidence level of every interval
    method: str = PAIRED_METHOD  # the shift's interval (difficulty and gap: as id_ood)


Scores = Mapping[Hashable, float]  # item → score, one bucket of one condition


def _paired(base: Scores, matched: Scores, where: str) -> tuple[list[float], list[float]]:
    if set(base) != set(matched):
        raise ValueError(f"shift split: {where}: the two conditions answered different items")
    keys = sorted(base, key=str)
    return [base[k] for k in keys], [matched[k] for k in keys]


def _part(value: float, lo: float, hi: float) -> Part:
    return Part(value=r10(value), ci_low=r10(lo), ci_high=r10(hi))


def shift_split(template: str, buckets: Sequence[Bucket], base: Sequence[Scores],
                matched: Sequence[Scores], status: GapStatus) -> ShiftSplit | None:
    """The split of one template from each bucket's item scores under the ID-exemplar condition
    (``base``) and the matched one (``matched``, OOD buckets only), in bucket order; None when
    the matched condition answered no OOD item. ``status``: the ID-exemplar report's."""
    ids = [s for b, scores in zip(buckets, base, strict=True) if b.role == "ID"
           for s in scores.values()]
    rows: list[BucketShift] = []
    ood_base: list[float] = []
    ood_matched: list[float] = []
    for b, sb, sm in zip(buckets, base, matched, strict=True):
        if b.role != "OOD" or not sm:
            continue
        xb, xm = _paired(sb, sm, f"bucket {b.label}")
        lo, hi = paired_diff_interval(xb, xm, [1.0] * len(xb))
        mb, mm = math.fsum(xb) / len(xb), math.fsum(xm) / len(xm)
        rows.append(BucketShift(bucket=b.label, n=len(xb), base=r10(mb), matched=r10(mm),
                                shift=_part(mm - mb, lo, hi)))
        ood_base += xb
        ood_matched += xm
    if not rows:
        return None
    n_id, n_ood = len(ids), len(ood_base)
    if status != "measured" or not ids:
        return ShiftSplit(template=template, status=status, gap=None, difficulty=None,
                          shift=None, n_id=n_id, n_ood=n_ood, buckets=rows)
    acc_id = math.fsum(ids) / n_id
    acc_base, acc_matched = math.fsum(ood_base) / n_ood, math.fsum(ood_matched) / n_ood
    p_id = proportion(ids)
    gap = _part(acc_id - acc_base, *diff_interval(p_id, proportion(ood_base)))
    difficulty = _part(acc_id - acc_matched, *diff_interval(p_id, proportion(ood_matched)))
    shift = _part(acc_matched - acc_base,
                  *paired_diff_interval(ood_base, ood_matched, [1.0] * n_ood))
    return ShiftSplit(template=template, status=status, gap=gap, difficulty=difficulty,
                      shift=shift, n_id=n_id, n_ood=n_ood, buckets=rows)


def has_exemplars(spec: Mapping[str, Any]) -> bool:
    """Whether a task (its resolved spec, as results.json keeps it) shows its items exemplars:
    without any, its ID/OOD split is a difficulty split with no exemplar shift to control."""
    fewshot = spec.get("fewshot") or {}
    conds = fewshot.get("conditions") or []
    return bool(fewshot.get("k")) or any(c.get("k") for c in conds)
