"""Runs a task: its plan (``run/plan``) → prompts → strategy (requests → model → scores) →
reports.

Requests go to the model a chunk at a time (``--chunk-size``), so the backend can sort and batch
them. Memory stays flat with the number of items: generated items are made on demand, sample
records go to the samples file as each chunk is scored, and the reports are computed from a few
numbers per sample (``ScoreColumns``); analyses read the records back from the samples file.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from itertools import groupby, islice
from pathlib import Path

from harness.analyses.registry import run_analyses
from harness.answers.budget import lost_to_budget
from harness.config import RunConfig
from harness.errors import HarnessError, ItemError
from harness.gaps.shift import MATCHED
from harness.lm import LM
from harness.run.asked import asked_items
from harness.run.plan import RunPlan, plan_task
from harness.run.results import (
    HorizonResult,
    SamplesFile,
    SampleWriter,
    TaskResult,
    samples_path,
    spec_hash,
)
from harness.scoring.prepared import Prepared
from harness.scoring.records import SampleRecord
from harness.scoring.report import ScoreColumns
from harness.spec.task import TaskSpec
from harness.strategies import run_strategy
from harness.tasks.index import TaskRef

RAISES = 3  # times the horizon search doubles the budget of an answer lost to it (within the
# model's context) before the answer stands


def _base_measured(scores: ScoreColumns, spec: TaskSpec, seed: int, template: str) -> bool:
    """Whether the ID-exemplar report of ``template`` has a measurable gap: the matched-exemplar
    control splits that gap, and at the floor or ceiling there is none to split, so its OOD
    items are not asked again."""
    reports = scores.reports(spec.gaps, seed, spec.scoring.metric, spec.scoring.extract)
    base = next((r for r in reports if r.template == template and r.condition == ""), None)
    return base is not None and base.gaps.status == "measured"


@dataclass(frozen=True)
class TaskOutcome:
    """A finished task: its results entry and phase timings."""

    result: TaskResult  # goes into results.json
    timings: dict[str, float]  # seconds: prepare, model (wall and process CPU), write


def run_task(ref: TaskRef, spec: TaskSpec, model: LM, cfg: RunConfig,
             on_progress: Callable[[str], None] | None = None) -> TaskOutcome:
    """Evaluate one task; writes its samples file and returns its aggregates. Code of the task
    that fails on one item (``ItemError``) is an error naming the task, template, bucket, item
    and seed, and the ``harness tasks sample`` command that makes that item again."""
    try:
        return _run_task(ref, spec, model, cfg, on_progress)
    except ItemError as e:
        raise HarnessError(e.located(ref.address, cfg.seed)) from e


def _run_task(ref: TaskRef, spec: TaskSpec, model: LM, cfg: RunConfig,
              on_progress: Callable[[str], None] | None) -> TaskOutcome:
    t0 = time.perf_counter()
    plan = plan_task(ref, spec, cfg, model)
    t1 = time.perf_counter()
    if on_progress:
        on_progress(f"{ref.address}: {plan.prompts()} prompts")
    t_model = cpu_model = 0.0
    path = samples_path(cfg.output_dir, ref.address)
    writer = SampleWriter(path, cfg.output_dir)
    ranks = plan.ranks  # item position → order by id within its bucket
    scores = ScoreColumns(ref.address, plan.buckets,  # what the reports need of each sample
                          spec.scoring.extra_metrics)
    try:
        for (tpl, cond), segment in groupby(plan.prepared(),
                                            key=lambda p: (p.template, p.condition)):
            if cond == MATCHED and not _base_measured(scores, spec, cfg.seed, tpl):
                if on_progress:  # a gap at the floor or ceiling has nothing to split
                    on_progress(f"{ref.address}: matched-exemplar control not run for template "
                                f"{tpl}: its ID-exemplar report has no measurable gap")
                continue
            while chunk := list(islice(segment, cfg.chunk_size)):
                model.announce(asked_items(plan, spec, chunk))  # (the planted model's seam)
                tc, cc = time.perf_counter(), time.process_time()
                records = run_strategy(cfg.strategy, spec, ref.address, chunk, plan.pool, model)
                t_model += time.perf_counter() - tc
                cpu_model += time.process_time() - cc  # every thread of this process (costs)
                for p, rec in zip(chunk, records, strict=True):
                    writer.write(rec)
                    scores.add(rec, ranks[p.position])
                del records  # a chunk's records are on disk now: keep nothing of them
    finally:
        writer.close()
    t2 = time.perf_counter()
    t_fixed = t_model  # the fixed buckets' model time (the horizon's comes after t2)
    reports = scores.reports(spec.gaps, cfg.seed, spec.scoring.metric, spec.scoring.extract)
    # analyses get the records without prompts, outputs and calls, read back from the file
    analyses = run_analyses(SamplesFile(path, slim=True), plan.buckets, spec.analyses, cfg.seed)
    horizons = []
    if cfg.horizon and spec.horizon is None and on_progress:
        on_progress(f"{ref.address}: no horizon search (the task file has no horizon: key)")
    t_search = 0.0
    if cfg.horizon and spec.horizon is not None:
        tc, cc = time.perf_counter(), time.process_time()
        horizons = _horizons(plan, model, cfg, path, on_progress)
        t_search = time.perf_counter() - tc
        t_model += t_search
        cpu_model += time.process_time() - cc
    result = TaskResult(
        task=ref.address, origin=ref.origin, spec=spec.model_dump(mode="json"),
        spec_sha256=spec_hash(spec), difficulty_name=spec.difficulty_name,
        n_items=len(plan.inst.items), dropped_records=plan.inst.dropped,
        samples_file=Path(path).relative_to(cfg.output_dir).as_posix(),
        samples_sha256=writer.sha256, templates=reports,
        analyses=analyses, shift=scores.splits(reports), horizons=horizons,
    )
    t3 = time.perf_counter()
    # each span counted once: the horizon search is model time, not scoring or preparing
    return TaskOutcome(result, {"prepare_s": t1 - t0 + (t2 - t1 - t_fixed), "model_s": t_model,
                                "model_cpu_s": cpu_model, "score_write_s": t3 - t2 - t_search})


def _horizons(plan: RunPlan, model: LM, cfg: RunConfig, fixed_path: Path,
              on_progress: Callable[[str], None] | None) -> list[HorizonResult]:
    """The task's adaptive horizon searches (``run/horizon``), their records written to
    ``samples/<task>.horizon.jsonl``."""
    from harness.run.horizon import horizon_path, search_task

    path = horizon_path(cfg.output_dir, plan.task)
    writer = SampleWriter(path, cfg.output_dir)

    def answer(answered: TaskSpec, batch: list[Prepared]) -> list[SampleRecord]:
        if on_progress:
            on_progress(f"{plan.task}: horizon search, {len(batch)} prompts")
        model.announce(asked_items(plan, answered, batch, searched=True))
        records = run_strategy(cfg.strategy, answered, plan.task, batch, plan.pool, model)
        for _ in range(RAISES):  # a wrong answer the budget cut is asked again with more room
            again = [(i, plan.raised(batch[i])) for i, r in enumerate(records)
                     if lost_to_budget(r)]
            grown = [(i, p) for i, p in again if p is not None]
            if not grown:
                break
            redo = run_strategy(cfg.strategy, answered, plan.task, [p for _, p in grown],
                                plan.pool, model)
            for (i, p), rec in zip(grown, redo, strict=True):
                batch[i], records[i] = p, rec
        for rec in records:
            writer.write(rec)
        return records

    try:
        found = search_task(plan, model, cfg, SamplesFile(fixed_path, slim=True), answer)
    finally:
        writer.close()
    rel = Path(path).relative_to(cfg.output_dir).as_posix()
    return [h.model_copy(update={"samples_file": rel, "samples_sha256": writer.sha256})
            for h in found]
