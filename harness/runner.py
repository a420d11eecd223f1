"""Runs tasks: instances → prompts → strategy (requests → model → scores) → reports.

Requests go to the model a chunk at a time (``--chunk-size``), so the backend can sort and batch
them. Memory stays flat with the number of items: generated items are made on demand, sample
records go to the samples file as each chunk is scored, and the reports are computed from a few
numbers per sample (``ScoreColumns``); analyses read the records back from the samples file.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby, islice, product
from pathlib import Path

from harness.analyses.registry import run_analyses
from harness.config import RunConfig
from harness.errors import HarnessError, ItemError, did_you_mean
from harness.gaps.shift import MATCHED
from harness.items import (
    Instance,
    InstanceSet,
    build_instances,
    items_address,
    labels,
    select_fewshot,
)
from harness.lm import LM
from harness.outputs import output_type
from harness.outputs.prompts import build_prompt, build_turns, target_text
from harness.results import (
    HorizonResult,
    SamplesFile,
    SampleWriter,
    TaskResult,
    samples_path,
    spec_hash,
)
from harness.scoring.prepared import Prepared
from harness.scoring.report import ScoreColumns
from harness.spec.buckets import Bucket
from harness.spec.task import FewShotCondition, TaskSpec, TemplateSpec
from harness.strategies import run_strategy
from harness.strategies.registry import check_strategy
from harness.tasks.index import TaskRef


def pick_templates(spec: TaskSpec, wanted: list[str] | None, task: str) -> list[TemplateSpec]:
    """The templates a run uses: the task's first by default, ``all``, or the named ones."""
    if not wanted:
        return list(spec.templates) if spec.default_templates == "all" else [spec.templates[0]]
    if wanted == ["all"]:
        return list(spec.templates)
    by_id = {t.id: t for t in spec.templates}
    missing = [w for w in wanted if w not in by_id]
    if len(missing) == len(wanted):
        raise HarnessError(
            f"--templates: task {task} has no template {missing[0]!r}"
            + did_you_mean(missing[0], by_id) + f" (templates: {', '.join(by_id)})"
        )
    return [by_id[w] for w in wanted if w in by_id]


def check_run(cfg: RunConfig, specs: Sequence[tuple[TaskRef, TaskSpec]]) -> None:
    """The run's arguments against every task, before any model loads: ``--strategy`` (known,
    and able to run the task's output type), ``--templates`` (each task has one of them) and
    ``--num-fewshot`` (a generator's exemplar pool holds that many); a ``HarnessError`` naming
    the argument otherwise."""
    from harness.tasks.item_checks import check_pool

    strategy = check_strategy(cfg.strategy)
    check = getattr(strategy, "check", None)
    for ref, spec in specs:
        pick_templates(spec, cfg.templates, ref.address)
        if callable(check):
            check(spec, ref.address)
        if cfg.num_fewshot is not None:
            fewshot = spec.fewshot.model_copy(update={"k": cfg.num_fewshot})
            try:
                check_pool(spec.model_copy(update={"fewshot": fewshot}), ref.address)
            except HarnessError as e:
                raise HarnessError(f"--num-fewshot {cfg.num_fewshot}: {e}") from None


def conditions(spec: TaskSpec, buckets: Sequence[Bucket] = (), matched_control: bool = False,
               num_fewshot: int | None = None) -> list[FewShotCondition]:
    """The task's few-shot conditions; one unnamed condition when it declares none, followed by
    the matched-exemplar control (``gaps/shift``) on the OOD ``buckets`` when it is asked for
    (``matched_control``, or the task file's ``fewshot.matched_control``) and the task has
    exemplars (``num_fewshot``: the run's override of ``fewshot.k``). A task that declares
    conditions keeps its own design."""
    if spec.fewshot.conditions:
        return list(spec.fewshot.conditions)
    out = [FewShotCondition(id="")]
    k = spec.fewshot.k if num_fewshot is None else num_fewshot
    oods: list[str | float] = [b.label for b in buckets if b.role == "OOD"]
    if (matched_control or spec.fewshot.matched_control) and k > 0 and oods:
        out.append(FewShotCondition(id=MATCHED, matched=True, evaluate=oods))
    return out


def run_conditions(spec: TaskSpec, inst: InstanceSet, cfg: RunConfig) -> list[FewShotCondition]:
    """``conditions`` of one run of a task."""
    return conditions(spec, inst.buckets, cfg.matched_control, cfg.num_fewshot)


def prepare(spec: TaskSpec, task: str, inst: InstanceSet, cfg: RunConfig,
            model: LM) -> list[Prepared]:
    """Every (template, condition, item) triple with its exact prompt and target."""
    return list(iter_prepared(spec, task, inst, cfg, model))


def iter_prepared(spec: TaskSpec, task: str, inst: InstanceSet, cfg: RunConfig,
                  model: LM) -> Iterator[Prepared]:
    """``prepare``, one triple at a time (the runner streams them in chunks)."""
    for tpl, cond in product(pick_templates(spec, cfg.templates, task),
                             run_conditions(spec, inst, cfg)):
        evaluated = labels(cond.evaluate)
        for pos, item in enumerate(inst.items):
            if evaluated is not None and item.bucket.label not in evaluated:
                continue
            yield prepare_one(spec, task, tpl, cond, item, inst.pool, cfg, model, pos)


def prepare_one(spec: TaskSpec, task: str, tpl: TemplateSpec, cond: FewShotCondition,
                item: Instance, pool: Sequence[Instance], cfg: RunConfig, model: LM,
                position: int = 0) -> Prepared:
    """One item under one template and few-shot condition, with its exemplars from ``pool``."""
    out = output_type(spec)
    k = cond.k if cond.k is not None else spec.fewshot.k
    k = k if cfg.num_fewshot is None or cond.k is not None else cfg.num_fewshot
    shared = spec.fewshot.shared if cfg.fewshot_shared is None else cfg.fewshot_shared
    allowed = {item.bucket.label} if cond.matched else labels(cond.pool)
    shots = select_fewshot(item, pool, k, cfg.seed, items_address(spec, task), allowed, cond.id,
                           shared)
    if cfg.apply_chat_template:
        prompt = model.apply_chat_template(build_turns(spec, tpl, item, shots))
    else:
        prompt = build_prompt(spec, tpl, item, shots)
    return Prepared(
        task=task, item=item, template=tpl.id, condition=cond.id,
        fewshot_ids=[s.id for s in shots],
        meta={f: item.record[f] for f in spec.fields.meta if f in item.record},
        prompt=prompt, choices=out.choices(spec, item),
        target=target_text(spec, tpl, item), gold=out.gold(spec, item), position=position,
    )


def _base_measured(scores: ScoreColumns, spec: TaskSpec, seed: int, template: str) -> bool:
    """Whether the ID-exemplar report of ``template`` has a measurable gap: the matched-exemplar
    control splits that gap, and at the floor or ceiling there is none to split, so its OOD
    items are not asked again."""
    reports = scores.reports(spec.gaps, seed, spec.scoring.metric)
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
    inst = build_instances(spec, ref.address, cfg.seed, ref.base_dir, cfg.limit_per_bucket,
                           model.count_tokens, cfg.matched_control)
    t1 = time.perf_counter()
    if on_progress:
        n_tpl = len(pick_templates(spec, cfg.templates, ref.address))
        per_cond = [inst.count(labels(c.evaluate)) for c in run_conditions(spec, inst, cfg)]
        on_progress(f"{ref.address}: {n_tpl * sum(per_cond)} prompts")
    t_model = cpu_model = 0.0
    path = samples_path(cfg.output_dir, ref.address)
    writer = SampleWriter(path, cfg.output_dir)
    ranks = inst.id_ranks()  # item position → order by id within its bucket
    scores = ScoreColumns(ref.address, inst.buckets)  # what the reports need of each sample
    try:
        stream = iter_prepared(spec, ref.address, inst, cfg, model)
        for (tpl, cond), segment in groupby(stream, key=lambda p: (p.template, p.condition)):
            if cond == MATCHED and not _base_measured(scores, spec, cfg.seed, tpl):
                if on_progress:  # a gap at the floor or ceiling has nothing to split
                    on_progress(f"{ref.address}: matched-exemplar control not run for template "
                                f"{tpl}: its ID-exemplar report has no measurable gap")
                continue
            while chunk := list(islice(segment, cfg.chunk_size)):
                tc, cc = time.perf_counter(), time.process_time()
                records = run_strategy(cfg.strategy, spec, ref.address, chunk, inst.pool, model)
                t_model += time.perf_counter() - tc
                cpu_model += time.process_time() - cc  # every thread of this process (costs)
                for p, rec in zip(chunk, records, strict=True):
                    writer.write(rec)
                    scores.add(rec, ranks[p.position])
                del records  # a chunk's records are on disk now: keep nothing of them
    finally:
        writer.close()
    t2 = time.perf_counter()
    reports = scores.reports(spec.gaps, cfg.seed, spec.scoring.metric)
    # analyses get the records without prompts, outputs and calls, read back from the file
    analyses = run_analyses(SamplesFile(path, slim=True), inst.buckets, spec.analyses, cfg.seed)
    horizons = []
    if cfg.horizon and spec.horizon is None and on_progress:
        on_progress(f"{ref.address}: no horizon search (the task file has no horizon: key)")
    if cfg.horizon and spec.horizon is not None:
        tc, cc = time.perf_counter(), time.process_time()
        horizons = _horizons(ref, spec, model, cfg, inst, path, on_progress)
        t_model += time.perf_counter() - tc
        cpu_model += time.process_time() - cc
    result = TaskResult(
        task=ref.address, origin=ref.origin, spec=spec.model_dump(mode="json"),
        spec_sha256=spec_hash(spec), difficulty_name=spec.difficulty_name,
        n_items=len(inst.items), dropped_records=inst.dropped,
        samples_file=Path(path).relative_to(cfg.output_dir).as_posix(),
        samples_sha256=writer.sha256, templates=reports,
        analyses=analyses, shift=scores.splits(reports), horizons=horizons,
    )
    t3 = time.perf_counter()
    return TaskOutcome(result, {"prepare_s": t1 - t0 + (t2 - t1 - t_model), "model_s": t_model,
                                "model_cpu_s": cpu_model, "score_write_s": t3 - t2})


def _horizons(ref: TaskRef, spec: TaskSpec, model: LM, cfg: RunConfig, inst: InstanceSet,
              fixed_path: Path, on_progress: Callable[[str], None] | None
              ) -> list[HorizonResult]:
    """The task's adaptive horizon searches (``horizon_search``), their records written to
    ``samples/<task>.horizon.jsonl``."""
    from harness.horizon_search import horizon_path, search_task

    path = horizon_path(cfg.output_dir, ref.address)
    writer = SampleWriter(path, cfg.output_dir)

    def answer(answered: TaskSpec, batch: list[Prepared]) -> list[float]:
        if on_progress:
            on_progress(f"{ref.address}: horizon search, {len(batch)} prompts")
        records = run_strategy(cfg.strategy, answered, ref.address, batch, inst.pool, model)
        for rec in records:
            writer.write(rec)
        return [r.score for r in records]

    try:
        found = search_task(spec, ref.address, model, cfg, SamplesFile(fixed_path, slim=True),
                            inst.buckets, inst.pool, pick_templates(spec, cfg.templates,
                                                                    ref.address),
                            run_conditions(spec, inst, cfg), answer,
                            lambda s, t, tpl, c, it, pool: prepare_one(s, t, tpl, c, it, pool,
                                                                       cfg, model))
    finally:
        writer.close()
    rel = Path(path).relative_to(cfg.output_dir).as_posix()
    return [h.model_copy(update={"samples_file": rel, "samples_sha256": writer.sha256})
            for h in found]
