"""One entry's row on one task: the primary report's buckets and gaps (shown only where
measurable: the task's status is judged on every template, ``scoring/floors``), and the accuracy
over every sample."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from harness.gaps.report import value_and_ci
from harness.gaps.shift import MATCHED, has_exemplars
from harness.leaderboard.board_file import (
    AnalysisCell,
    BucketCell,
    GapCell,
    MetricCells,
    Split,
    TaskRow,
)
from harness.leaderboard.horizons import horizon_cells
from harness.leaderboard.scores import ItemScores, Sample, item_scores
from harness.run.results import TaskResult
from harness.scoring.aggregates import BucketAggregate, RoleAggregate
from harness.scoring.floors import task_status
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10


@dataclass
class ItemData:
    """A task's samples as the board needs them."""

    everything: list[Sample]  # every sample: item, score, role, bucket, digest
    primary: list[SampleRecord]  # the primary report's samples, in file order

    def scores(self) -> ItemScores:
        """Item scores over every template and condition."""
        return item_scores(self.everything)

    def primary_scores(self, role: str) -> ItemScores | None:
        """Item scores of the primary report in one role (None: no such items)."""
        got = [Sample(r.id, r.score, True, r.bucket, sample_digest(r))
               for r in self.primary if r.role == role]
        return item_scores(got) if got else None


def sample_digest(r: SampleRecord) -> str:
    """sha256 of what makes two samples the same question: template, condition, prompt, target."""
    key = "\x1f".join((r.template, r.condition, r.prompt, r.target))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _all_templates(t: TaskResult) -> tuple[float | None, int]:
    reps = [rep for rep in t.templates if rep.condition != MATCHED]
    n = sum(b.n for rep in reps for b in rep.buckets)
    c = math.fsum(b.correct for rep in reps for b in rep.buckets)
    return (r10(c / n) if n else None), n


def _split(x: Any) -> Split | None:
    return None if x is None else Split(value=x.value, ci_low=x.ci_low, ci_high=x.ci_high)


def _cell(d: dict[str, Any]) -> GapCell:
    """A registered gap's cell from its JSON (a field that is not a number: None)."""
    value, lo, hi = value_and_ci(d)
    return GapCell(value=value, ci_low=lo, ci_high=hi)


def _cells(rows: Sequence[BucketAggregate | RoleAggregate]) -> list[BucketCell]:
    """A bucket table's rows as board cells (a role row's label: the role)."""
    return [BucketCell(label=r.bucket if isinstance(r, BucketAggregate) else r.role, n=r.n,
                       accuracy=r.accuracy, ci_low=r.ci_low, ci_high=r.ci_high,
                       baseline=r.baseline, floor=r.floor, constant=r.constant, cut=r.cut,
                       budget_bound=r.budget_bound, context_bound=r.context_bound,
                       looped=r.looped)
            for r in rows]


def task_row(entry_id: str, t: TaskResult, source: str, samples_rel: str | None,
             items: ItemData | None) -> TaskRow:
    """The row of one entry on one task (``gap_p_holm`` and ``viewer`` filled in later)."""
    rep = t.templates[0]
    roles = {r.role: r for r in rep.roles}
    g = rep.gaps
    status, reason = task_status(t.templates, rep)  # floor: rep's own, or pooled over templates
    measured = status == "measured"
    gap = g.id_ood if measured else None
    ret = g.retention if measured else None
    hz = g.horizon if measured else None
    edge = g.edge if measured else None
    split = next((x for x in t.shift if x.template == rep.template and x.base == rep.condition
                  and measured), None)
    d50, d50_matched = horizon_cells(t, rep.template)
    if items is not None and items.everything:
        sc = items.scores()
        accuracy: float | None = r10(sc.accuracy)
        n_items, n_samples = len(sc.ids), int(sc.counts.sum())
    else:
        accuracy, n_samples = _all_templates(t)
        n_items = t.n_items
    return TaskRow(
        entry=entry_id, template=rep.template, condition=rep.condition,
        n_reports=len(t.templates), n_items=n_items, n_samples=n_samples, accuracy=accuracy,
        n_id=roles["ID"].n if "ID" in roles else 0,
        n_ood=roles["OOD"].n if "OOD" in roles else 0,
        id_accuracy=roles["ID"].accuracy if "ID" in roles else None,
        ood_accuracy=roles["OOD"].accuracy if "OOD" in roles else None,
        status=status, chance=g.chance, status_reason=reason,
        gap=gap.value if gap else None, gap_ci_low=gap.ci_low if gap else None,
        gap_ci_high=gap.ci_high if gap else None, gap_p_holm=None,
        retention=ret.value if ret else None, retention_ci_low=ret.ci_low if ret else None,
        retention_ci_high=ret.ci_high if ret else None,
        retention_unbounded=bool(ret and ret.unbounded_high),
        horizon=hz.value if hz else None, horizon_factor=hz.factor if hz else None,
        d50=d50, d50_matched=d50_matched,
        baseline=roles["ID"].baseline if "ID" in roles else None,
        ood_baseline=roles["OOD"].baseline if "OOD" in roles else None,
        constant=any(b.constant for b in rep.buckets) or any(x.constant for x in rep.roles),
        budget_bound=list(g.budget_bound),
        edge=_split(edge), edge_buckets=f"{edge.id_bucket} → {edge.ood_bucket}" if edge else None,
        exemplars=has_exemplars(t.spec),
        difficulty=_split(split.difficulty) if split else None,
        shift=_split(split.shift) if split else None,
        gaps={n: _cell(d) for n, d in g.extra.items()} if measured else {},
        buckets=_cells(rep.buckets),
        metrics={m.metric: MetricCells(buckets=_cells(m.buckets), roles=_cells(m.roles))
                 for m in rep.metrics},
        analyses=[AnalysisCell(name=a.name, value=a.value, ci_low=a.ci_low, ci_high=a.ci_high,
                               n=a.n) for a in t.analyses],
        spec_sha256=t.spec_sha256, source=source, samples=samples_rel, viewer=None,
    )
