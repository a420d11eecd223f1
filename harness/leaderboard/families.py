"""Model families on a board: entries whose names differ only in a trailing ``-s<seed>``
(training seeds). Their spread (mean, sd, min–max) and, per task, the success rate over seeds: a
seed succeeds when its pooled OOD accuracy is at least 90% (Madsen & Johansen's measure of
arithmetic extrapolation), with a Wilson 95% interval over the seeds."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence

from harness.leaderboard.board_file import Entry, FamilyRow, SeedSuccess, TaskRow
from harness.leaderboard.collect import suite_of, task_sort_key
from harness.leaderboard.scores import macro_scores
from harness.scoring.stats import r10, wilson_interval

SUCCESS = 0.9  # a member generalizes when its pooled OOD accuracy reaches this


def _r(x: float | None) -> float | None:
    return None if x is None else r10(x)


def families(entries: Sequence[Entry], rows: Mapping[str, Mapping[str, TaskRow]]
             ) -> list[FamilyRow]:
    """Families with two or more members: spread of their overall score and of each task's
    accuracy, and per task with OOD buckets the members that generalize."""
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
        out.append(FamilyRow(family=fam, members=[m.id for m in members], tasks=common,
                             **_spread("overall", overall),
                             task_stats={n: list(_spread("", [rows[m.id][n].accuracy
                                                                for m in members]).values())
                                         for n in common},
                             success={n: ok for n in common if (ok := _success(
                                 [rows[m.id][n].ood_accuracy for m in members]))}))
    return out


def _success(ood: Sequence[float | None]) -> SeedSuccess | None:
    """Members whose pooled OOD accuracy reaches SUCCESS, with a Wilson interval (None when no
    member has OOD items)."""
    vals = [a for a in ood if a is not None]
    if not vals:
        return None
    k = sum(a >= SUCCESS - 1e-12 for a in vals)
    lo, hi = wilson_interval(k, len(vals))
    return SeedSuccess(threshold=SUCCESS, succeeded=k, members=len(vals),
                       rate=r10(k / len(vals)), ci_low=r10(lo), ci_high=r10(hi))


def _spread(prefix: str, xs: Sequence[float | None]) -> dict[str, float | None]:
    vals = [x for x in xs if x is not None]
    keys = [f"{prefix}_{k}" if prefix else k for k in ("mean", "sd", "min", "max")]
    if not vals:
        return dict.fromkeys(keys)
    sd = statistics.stdev(vals) if len(vals) > 1 else None
    return dict(zip(keys, [_r(math.fsum(vals) / len(vals)), _r(sd), _r(min(vals)),
                           _r(max(vals))], strict=True))
