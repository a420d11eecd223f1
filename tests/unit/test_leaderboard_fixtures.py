"""Hand-built results.json files (and per-sample files) for the leaderboard and compare tests.

Numbers are given directly (bucket counts, gap CIs, analyses), so every column the leaderboard
derives can be checked against a hand computation.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.analyses.registry import AnalysisResult
from harness.config import RunConfig
from harness.gaps.builtin import Horizon, IdOodGap, Retention
from harness.gaps.report import GapReport
from harness.lm import ModelIdentity
from harness.run.results import (
    SCHEMA_VERSION,
    Environment,
    HarnessInfo,
    Results,
    TaskResult,
    write_results,
)
from harness.scoring.aggregates import BucketAggregate, RoleAggregate
from harness.scoring.records import SampleRecord
from harness.scoring.report import TemplateReport
from harness.scoring.stats import wilson_interval


@dataclass
class TaskSpecLite:
    """One task of a hand-built run: buckets as (label, role, n, correct)."""

    task: str
    buckets: Sequence[tuple[str, str, int, float]]
    gap: tuple[float, float, float] | None = None  # value, ci_low, ci_high
    horizon_factor: float | None = None
    analyses: Sequence[tuple[str, float | None]] = ()
    template: str = "t0"
    extra_templates: Sequence[str] = ()
    description: str = "A test task."
    spec_extra: dict[str, Any] = field(default_factory=dict)


def _bucket(i: int, label: str, role: str, n: int, correct: float) -> BucketAggregate:
    lo, hi = wilson_interval(correct, n) if n else (None, None)
    return BucketAggregate(bucket=label, index=i, role=role, lo=float(i + 1), hi=float(i + 1),  # type: ignore[arg-type]
                           n=n, correct=correct, accuracy=correct / n if n else None,
                           ci_low=lo, ci_high=hi)


def _role(role: str, bs: Sequence[BucketAggregate]) -> RoleAggregate:
    n = sum(b.n for b in bs)
    c = math.fsum(b.correct for b in bs)
    lo, hi = wilson_interval(c, n) if n else (None, None)
    return RoleAggregate(role=role, n=n, correct=c, accuracy=c / n if n else None,  # type: ignore[arg-type]
                         ci_low=lo, ci_high=hi)


def template_report(t: TaskSpecLite, template: str) -> TemplateReport:
    buckets = [_bucket(i, *b) for i, b in enumerate(t.buckets)]
    roles = [_role(r, [b for b in buckets if b.role == r]) for r in ("ID", "OOD")
             if any(b.role == r for b in buckets)]
    acc = {r.role: r.accuracy for r in roles}
    gap = None
    ret = None
    if t.gap is not None:
        n_id = sum(b.n for b in buckets if b.role == "ID")
        n_ood = sum(b.n for b in buckets if b.role == "OOD")
        gap = IdOodGap(value=t.gap[0], ci_low=t.gap[1], ci_high=t.gap[2], n_id=n_id,
                       n_ood=n_ood)
        a_id, a_ood = acc.get("ID"), acc.get("OOD")
        ret = Retention(value=None if not a_id or a_ood is None else a_ood / a_id, ci_low=None,
                        ci_high=None, n_id=n_id, n_ood=n_ood)
    hz = None
    if t.horizon_factor is not None:
        hz = Horizon(threshold=0.1, value=t.horizon_factor * 2, factor=t.horizon_factor,
                     max_id_difficulty=2.0, last_bucket=None)
    return TemplateReport(template=template, n=sum(b.n for b in buckets), buckets=buckets,
                          roles=roles, gaps=GapReport(id_ood=gap, retention=ret, horizon=hz))


def make_results(model: str, tasks: Sequence[TaskSpecLite], *, seed: int = 0,
                 limit: int | None = 10, backend: str = "hf",
                 model_args: dict[str, str] | None = None, version: str = "0.1.0") -> Results:
    trs = []
    for t in tasks:
        spec = {"name": t.task.split("/")[1], "description": t.description,
                "citations": ["Someone et al. 2024. A paper."],
                "card": {"axis": "length", "shift": "longer", "locus": ["input"]},
                **t.spec_extra}
        reports = [template_report(t, tpl) for tpl in (t.template, *t.extra_templates)]
        trs.append(TaskResult(
            task=t.task, origin="builtin", spec=spec, spec_sha256="a" * 64,
            difficulty_name="digits", n_items=reports[0].n, dropped_records=0,
            samples_file=f"samples/{t.task}.jsonl", templates=reports,
            analyses=[AnalysisResult(name=n, value=v, n=5) for n, v in t.analyses]))
    return Results(
        schema_version=SCHEMA_VERSION,
        harness=HarnessInfo(version=version, git_commit="c" * 40, git_dirty=False),
        run=RunConfig(model=f"{backend}:{model}", model_args=model_args or {},
                      tasks=[t.task for t in tasks], seed=seed, limit_per_bucket=limit,
                      output_dir=Path("x")),
        model=ModelIdentity(backend=backend, name=model, path=f"/models/{model}",
                            revision="r1", weights_sha256="b" * 64, dtype="float32",
                            device="cpu"),
        environment=Environment(python="3.11", platform="Linux", libraries={}),
        tasks=trs, timings={"total_s": 1.0},
    )


def write_run(folder: Path, res: Results, samples: dict[str, list[SampleRecord]] | None = None
              ) -> Path:
    """Write results.json (and per-sample files) into *folder*; returns the results.json path."""
    path = write_results(res, folder)
    for task, recs in (samples or {}).items():
        p = folder / "samples" / f"{task}.jsonl"
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in recs),
                     encoding="utf-8")
    return path


def record(task: str, item: str, score: float, bucket: str = "1", index: int = 0,
           role: str = "ID", template: str = "t0", target: str = "x") -> SampleRecord:
    return SampleRecord(task=task, id=item, template=template, fewshot_ids=[], difficulty=1.0,
                        bucket=bucket, bucket_index=index, role=role, prompt="p",  # type: ignore[arg-type]
                        target=target, output="o", extracted="o", score=score)
