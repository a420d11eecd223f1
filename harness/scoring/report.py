"""Per-template reports: bucket and role accuracies plus gaps, computed from sample records only.

``task_reports`` is the single place results are computed: the runner builds results.json with it
and anyone can recompute the same numbers from ``samples/<task>.jsonl``. The gap bootstrap is
seeded with ``derive_seed(seed, task, template, "gaps")`` and items are ordered by id within a
bucket, so the numbers do not depend on the order of the records.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict

from harness.scoring.aggregates import (
    BucketAggregate,
    RoleAggregate,
    aggregate_buckets,
    aggregate_roles,
)
from harness.scoring.gaps import GapReport, compute_gaps
from harness.scoring.records import SampleRecord
from harness.seeding import derive_seed
from harness.tasks.buckets import Bucket
from harness.tasks.spec import GapsSpec


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
    gap_seed = derive_seed(seed, task, template, "gaps", *([cond] if cond else []))
    return TemplateReport(
        template=template,
        condition=cond,
        n=len(samples),
        buckets=aggregate_buckets(samples, buckets),
        roles=aggregate_roles(samples, buckets),
        gaps=compute_gaps(samples, buckets, gaps_spec, gap_seed),
    )


def task_reports(
    samples: Iterable[SampleRecord],
    buckets: Sequence[Bucket],
    gaps_spec: GapsSpec,
    seed: int,
) -> list[TemplateReport]:
    """One report per (template, condition), in order of first appearance (no samples: [])."""
    groups: dict[tuple[str, str], list[SampleRecord]] = {}
    for s in samples:
        groups.setdefault((s.template, s.condition), []).append(s)
    return [template_report(g, buckets, gaps_spec, seed) for g in groups.values()]
