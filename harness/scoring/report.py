"""Per-template reports: bucket and role accuracies plus gaps, computed from sample records only.

``report_from_scores`` is the single place results are computed, from each bucket's scores in
item-id order. ``task_reports`` feeds it from sample records: anyone can recompute the numbers of
results.json from ``samples/<task>.jsonl``. The runner feeds it from ``ScoreColumns``, the few
numbers per sample the reports need, kept in compact columns while the records themselves stream
to disk (memory stays flat with the number of items). The gap bootstrap is seeded with
``derive_seed(seed, task, template, "gaps")`` and items are ordered by id within a bucket, so the
numbers do not depend on the order of the records.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from harness.gaps.report import GapReport, chance_level, gaps_from_scores, sample_chance
from harness.scoring.aggregates import (
    BucketAggregate,
    RoleAggregate,
    bucket_position,
    bucket_rows,
    role_rows,
    scores_by_bucket,
)
from harness.scoring.records import SampleRecord
from harness.seeding import derive_seed
from harness.spec.buckets import Bucket
from harness.spec.task import GapsSpec


class TemplateReport(BaseModel):
    """Everything measured for one prompt template of one task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    template: str  # prompt template id
    condition: str = ""  # few-shot condition id ("" when the task declares none)
    n: int  # scored samples under this template
    buckets: list[BucketAggregate]  # one row per bucket, in bucket order (empty buckets included)
    roles: list[RoleAggregate]  # ID then OOD, pooled over items
    gaps: GapReport  # the gaps the task asked for


def template_report(
    samples: Sequence[SampleRecord],
    buckets: Sequence[Bucket],
    gaps_spec: GapsSpec,
    seed: int,
) -> TemplateReport:
    """The report for samples of one task and one template (``seed``: the run seed)."""
    if not samples:
        raise ValueError("template_report: no samples")
    task, template, cond = samples[0].task, samples[0].template, samples[0].condition
    for s in samples:
        if (s.task, s.template, s.condition) != (task, template, cond):
            raise ValueError(
                f"template_report: samples mix {task!r}/{template!r}/{cond!r} with "
                f"{s.task!r}/{s.template!r}/{s.condition!r}"
            )
    chance = chance_level([s for s in samples if s.role == "ID"])
    return report_from_scores(task, template, cond, scores_by_bucket(samples, buckets), buckets,
                              gaps_spec, seed, chance)


def report_from_scores(
    task: str, template: str, condition: str, per_bucket: Sequence[Sequence[float]],
    buckets: Sequence[Bucket], gaps_spec: GapsSpec, seed: int, chance: float = 0.0,
) -> TemplateReport:
    """The report of one (template, condition) of ``task`` from each bucket's scores, in bucket
    order and item-id order within a bucket (``seed``: the run seed; ``chance``: the ID items'
    chance level)."""
    gap_seed = derive_seed(seed, task, template, "gaps", *([condition] if condition else []))
    return TemplateReport(
        template=template,
        condition=condition,
        n=sum(len(scores) for scores in per_bucket),
        buckets=bucket_rows(per_bucket, buckets),
        roles=role_rows(per_bucket, buckets),
        gaps=gaps_from_scores(per_bucket, buckets, gaps_spec, gap_seed, chance),
    )


def task_reports(
    samples: Iterable[SampleRecord],
    buckets: Sequence[Bucket],
    gaps_spec: GapsSpec,
    seed: int,
) -> list[TemplateReport]:
    """One report per (template, condition), in order of first appearance (no samples: []).
    ``samples`` may be ``harness.results.SamplesFile.of(run_dir, task)``: the file is then
    checked against results.json's ``samples_sha256`` first (a mismatch is one-line error)."""
    groups: dict[tuple[str, str], list[SampleRecord]] = {}
    for s in samples:
        groups.setdefault((s.template, s.condition), []).append(s)
    return [template_report(g, buckets, gaps_spec, seed) for g in groups.values()]


class ScoreColumns:
    """What the reports need of each sample, a few bytes per sample: its (template, condition)
    group, bucket, item-id rank, score and chance level. ``reports`` gives exactly
    ``task_reports`` of the same records, given ranks that order the items by id within each
    bucket."""

    def __init__(self, task: str, buckets: Sequence[Bucket]) -> None:
        self.task = task  # task address every sample must carry
        self.buckets = list(buckets)  # the task's ordered buckets
        self._pos = {b.index: pos for pos, b in enumerate(self.buckets)}
        self._groups: dict[tuple[str, str], int] = {}  # (template, condition) → group number
        self._group, self._bucket = array("i"), array("i")
        self._rank, self._score, self._chance = array("q"), array("d"), array("d")

    def __len__(self) -> int:
        return len(self._score)

    def add(self, s: SampleRecord, rank: int) -> None:
        """Add one sample; ``rank`` orders its item by id among the items of its bucket."""
        pos = bucket_position(s, self._pos, self.buckets)
        if s.task != self.task:
            raise ValueError(f"sample {s.id!r} of task {s.task!r} among samples of {self.task!r}")
        self._group.append(self._groups.setdefault((s.template, s.condition), len(self._groups)))
        self._bucket.append(pos)
        self._rank.append(rank)
        self._score.append(s.score)
        self._chance.append(sample_chance(s))

    def reports(self, gaps_spec: GapsSpec, seed: int) -> list[TemplateReport]:
        """One report per (template, condition), in order of first appearance (no samples: [])."""
        group = np.frombuffer(self._group, dtype=np.intc)
        bucket = np.frombuffer(self._bucket, dtype=np.intc)
        rank = np.frombuffer(self._rank, dtype=np.int64)
        score = np.frombuffer(self._score, dtype=np.float64)
        chance = np.frombuffer(self._chance, dtype=np.float64)
        is_id = np.array([b.role == "ID" for b in self.buckets], dtype=bool)[bucket]
        # by group, then bucket, then item id (then score, as sorting (id, score) pairs does)
        order = np.lexsort((score, rank, bucket, group))
        keys = group[order].astype(np.int64) * len(self.buckets) + bucket[order]
        cuts = np.searchsorted(keys, np.arange(len(self._groups) * len(self.buckets) + 1))
        out = []
        for (template, condition), g in self._groups.items():
            per_bucket = [
                score[order[cuts[k]:cuts[k + 1]]].tolist()
                for k in range(g * len(self.buckets), (g + 1) * len(self.buckets))
            ]
            ids = (group == g) & is_id
            id_chance = (math.fsum(chance[ids].tolist()) / int(np.count_nonzero(ids))
                         if ids.any() else 0.0)
            out.append(report_from_scores(self.task, template, condition, per_bucket,
                                          self.buckets, gaps_spec, seed, id_chance))
        return out
