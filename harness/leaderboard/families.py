"""Model families on a board: entries whose names differ only in a trailing ``-s<seed>``
(training seeds). Their spread (mean, sd, min–max) and, per task, what the seeds show about
generalization, by one rule that cannot overstate (also used by the reference models'
``summarize.py``):

- a member **fits** a task when its pooled ID accuracy is at least 90% and so is its accuracy
  in the last ID bucket (the ID edge: a member that has not learned the edge cannot show
  anything past it); only fitted members are read for generalization, and a family with fewer
  than ``MIN_FITTED`` fitted members is "not testable (ID not learned)", or "(ID edge not
  learned)" when enough members fit pooled ID but too few of them reach 90% at the edge;
- a fitted member **succeeds** when its pooled OOD accuracy is at least 90% (Madsen &
  Johansen's measure of arithmetic extrapolation); the success rate over the fitted members has
  a Wilson 95% interval;
- the family's **extent** is the largest difficulty up to which every bucket's success rate
  (fitted members at ≥ 90% in that bucket) stays at least 90%, walking outward from the last
  ID bucket (None when even that one falls short), also as a multiple of the ID edge;
- a paper's **contrast** (``contrast_verdict``) compares two families only when both were
  trained and tested on the same task format (prompt and answer), or when the format is the
  contrasted factor itself; across formats it is "not comparable (format differs: ...)".
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.leaderboard.board_file import BucketInfo, Entry, FamilyRow, SeedSuccess, TaskRow
from harness.leaderboard.collect import suite_of, task_sort_key
from harness.leaderboard.scores import macro_scores
from harness.scoring.intervals import Proportion, diff_interval
from harness.scoring.stats import r10, wilson_interval

SUCCESS = 0.9  # a member fits (pooled ID and ID edge), generalizes (pooled OOD) at this
MIN_FITTED = 3  # fitted members a family needs before its OOD numbers are read
_EPS = 1e-12


def _r(x: float | None) -> float | None:
    return None if x is None else r10(x)


@dataclass(frozen=True)
class Member:
    """One seed's accuracies on one task: pooled ID and OOD, and per bucket in axis order."""

    id_accuracy: float | None  # pooled ID accuracy
    ood_accuracy: float | None  # pooled OOD accuracy
    buckets: Sequence[float | None]  # accuracy per bucket, aligned with the task's buckets


def seed_success(members: Sequence[Member], buckets: Sequence[BucketInfo],
                 fmt: str | None = None) -> SeedSuccess | None:
    """The rule above for one family on one task (None when no member has OOD items);
    ``fmt``: the task format the family was trained and tested on (for ``contrast_verdict``)."""
    with_ood = [m for m in members if m.ood_accuracy is not None]
    if not with_ood:
        return None
    ood_at = [i for i, b in enumerate(buckets) if b.role == "OOD"]
    id_at = [i for i, b in enumerate(buckets) if b.role == "ID"]
    first_ood, last_id = (ood_at[0] if ood_at else None), (id_at[-1] if id_at else None)

    def ok(m: Member, i: int | None) -> bool:
        return i is not None and (m.buckets[i] or 0.0) >= SUCCESS - _EPS

    pooled = [m for m in with_ood if (m.id_accuracy or 0.0) >= SUCCESS - _EPS]
    fitted = [m for m in pooled if ok(m, last_id)]  # pooled ID and the ID edge
    k = sum((m.ood_accuracy or 0.0) >= SUCCESS - _EPS for m in fitted)

    extent: float | None = None  # walked outward from the last ID bucket
    if fitted and last_id is not None:
        for i in [last_id, *ood_at]:
            if sum(ok(m, i) for m in fitted) < SUCCESS * len(fitted) - _EPS:
                break
            extent = _top(buckets[i])
    edge = None if last_id is None else _top(buckets[last_id])
    edges = [a - o for m in fitted if last_id is not None and first_ood is not None
             and (a := m.buckets[last_id]) is not None and (o := m.buckets[first_ood]) is not None]
    lo, hi = wilson_interval(k, len(fitted)) if fitted else (None, None)
    return SeedSuccess(
        threshold=SUCCESS, succeeded=k, members=len(with_ood), fitted=len(fitted),
        id_fitted=len(pooled), format=fmt,
        rate=_r(k / len(fitted)) if fitted else None, ci_low=_r(lo), ci_high=_r(hi),
        edge_succeeded=sum(ok(m, first_ood) for m in fitted),
        extent=extent, extent_factor=(None if extent is None or not edge else r10(extent / edge)),
        edge_gap=_r(math.fsum(edges) / len(edges)) if edges else None,
        verdict=family_verdict(len(fitted), k, extent, edge, len(with_ood), len(pooled)))


def _top(b: BucketInfo) -> float:
    """The largest difficulty a bucket surely holds: its value (range buckets: their lower
    edge, since the upper one is exclusive)."""
    return b.hi if b.hi == b.lo else b.lo


def family_verdict(fitted: int, succeeded: int, extent: float | None, edge: float | None,
                   members: int = MIN_FITTED, id_fitted: int | None = None) -> str:
    """One family on one task, in words; ``fitted``: members that fit pooled ID and the ID edge,
    ``id_fitted``: members that fit pooled ID (default: ``fitted``)."""
    if members < MIN_FITTED:
        return f"not testable (too few seeds: {members}, {MIN_FITTED} needed)"
    if fitted < MIN_FITTED <= (fitted if id_fitted is None else id_fitted):
        at = "" if edge is None else f" {edge:g}"
        return (f"not testable (ID edge not learned: {id_fitted} fit pooled ID, {fitted} of "
                f"them reach {100 * SUCCESS:g}% at the edge{at}; {MIN_FITTED} needed)")
    if fitted < MIN_FITTED:
        return f"not testable (ID not learned: {fitted} fitted, {MIN_FITTED} needed)"
    if succeeded >= SUCCESS * fitted - _EPS:
        return "extends past every OOD bucket"
    if extent is not None and edge and extent > edge:
        return f"extends to {extent:g} ({extent / edge:.2f}× the edge), not beyond"
    return "fails at the edge"


def contrast_verdict(a: SeedSuccess, b: SeedSuccess, format_contrasted: bool = False
                     ) -> tuple[str, tuple[float, float] | None]:
    """A paper's contrast: family ``a`` predicted to extend, ``b`` not to. Compared only on one
    task format (``SeedSuccess.format``; ``format_contrasted``: the format is the contrasted
    factor, as with index hints against none), else "not comparable (format differs: A vs B)"
    (or "(format not recorded)"); over fitted members only: "reproduced" (all-OOD success rates
    differ, Newcombe's interval above 0), "direction only (extent N× the edge)" (only the first
    OOD bucket's rates differ), "not reproduced", or "not testable" (too few seeds, ID not
    learned, or the ID edge not learned); with the all-OOD difference's interval."""
    if a.format is None or b.format is None:
        return "not comparable (format not recorded)", None
    if a.format != b.format and not format_contrasted:
        return f"not comparable (format differs: {a.format} vs {b.format})", None
    if a.format == b.format and format_contrasted:
        return f"not comparable (the format is the contrast, but both use {a.format})", None
    if min(a.members, b.members) < MIN_FITTED:
        return "not testable (too few seeds)", None
    for s in (a, b):
        if (s.fitted or 0) < MIN_FITTED:
            edge = (s.id_fitted or 0) >= MIN_FITTED
            return f"not testable (ID {'edge ' if edge else ''}not learned)", None
    ci = _diff(a.succeeded, a.fitted or 0, b.succeeded, b.fitted or 0)
    if ci[0] > 0:
        return "reproduced", ci
    edge_ci = _diff(a.edge_succeeded or 0, a.fitted or 0, b.edge_succeeded or 0, b.fitted or 0)
    if edge_ci[0] > 0:
        extent = f"{a.extent_factor:.2f}× the edge" if a.extent_factor is not None else "none"
        return f"direction only (extent {extent})", ci
    return "not reproduced", ci


def _diff(ka: int, na: int, kb: int, nb: int) -> tuple[float, float]:
    """Newcombe's 95% interval of ka/na − kb/nb (MOVER on exact limits, members as trials)."""
    return diff_interval(Proportion(ka / na, na, float(na)), Proportion(kb / nb, nb, float(nb)))


def families(entries: Sequence[Entry], rows: Mapping[str, Mapping[str, TaskRow]],
             axes: Mapping[str, Sequence[BucketInfo]]) -> list[FamilyRow]:
    """Families with two or more members: spread of their overall score and of each task's
    accuracy, and per task with OOD buckets what the seeds show (``seed_success``); ``axes``:
    each task's buckets in axis order."""
    by: dict[str, list[Entry]] = {}
    for e in entries:
        if e.family is not None:
            by.setdefault(f"{e.card.backend}:{e.family}", []).append(e)
    out = []
    for fam, members in sorted(by.items()):
        if len(members) < 2:
            continue
        common = sorted(set.intersection(*(set(rows[m.id]) for m in members)), key=task_sort_key)
        overall = []
        for m in members:
            acc = {n: a for n in common if (a := rows[m.id][n].accuracy) is not None}
            overall.append(macro_scores(acc, {n: suite_of(n) for n in acc})[1])
        success = {}
        for n in common:
            axis = list(axes.get(n, []))
            seeds = [_member(rows[m.id][n], axis) for m in members]
            if (ok := seed_success(seeds, axis)) is not None:
                success[n] = ok
        out.append(FamilyRow(family=fam, members=[m.id for m in members], tasks=common,
                             **_spread("overall", overall),
                             task_stats={n: list(_spread("", [rows[m.id][n].accuracy
                                                                for m in members]).values())
                                         for n in common},
                             success=success))
    return out


def seed_words(s: SeedSuccess) -> str:
    """One family's seeds on one task, in words (the board's family rows)."""
    def pc(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}"
    fitted = s.members if s.fitted is None else s.fitted
    extent = ("none" if s.extent is None else f"{s.extent:g}" + (
        f" ({s.extent_factor:.2f}× the edge)" if s.extent_factor is not None else ""))
    edge = "" if s.edge_gap is None else f", edge gap {pc(s.edge_gap)}"
    pooled = ("" if s.id_fitted is None or s.id_fitted == fitted
              else f" (pooled and at the ID edge; {s.id_fitted} fit pooled ID)")
    return (f"{s.verdict or '-'}; {fitted} of {s.members} seeds fit ID ≥ 90%{pooled}; "
            f"{s.succeeded} of "
            f"{fitted} with OOD ≥ 90% ({pc(s.rate)} [{pc(s.ci_low)}, {pc(s.ci_high)}]); "
            f"extent {extent}{edge}")


def _member(row: TaskRow, axis: Sequence[BucketInfo]) -> Member:
    by_label = {c.label: c.accuracy for c in row.buckets}
    return Member(row.id_accuracy, row.ood_accuracy, [by_label.get(b.label) for b in axis])


def _spread(prefix: str, xs: Sequence[float | None]) -> dict[str, float | None]:
    vals = [x for x in xs if x is not None]
    keys = [f"{prefix}_{k}" if prefix else k for k in ("mean", "sd", "min", "max")]
    if not vals:
        return dict.fromkeys(keys)
    sd = statistics.stdev(vals) if len(vals) > 1 else None
    return dict(zip(keys, [_r(math.fsum(vals) / len(vals)), _r(sd), _r(min(vals)),
                           _r(max(vals))], strict=True))
