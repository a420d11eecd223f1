"""The adaptive horizon search of a task (``harness eval --horizon``), after its fixed buckets.

For each template and exemplar condition the fixed run answered, the search (``scoring/horizon``)
starts from the fixed run's ID answers, then asks for rounds of fresh items at the difficulties
QUEST+ ranks most informative, between ``horizon.min`` and the largest difficulty that still
fits: the spec's ``horizon.max``, the generator's per-item time budget and the model's context
(prompt plus target); a model still above its midpoint there is searched on past it
(``widening``). Each round's answer budget fits its own items' targets (``RunPlan.budget``,
``horizon.max_tokens`` the least it gives), and an answer lost to it is asked again with more
room (``run/execute``). The items are the generator's own items for that value, from
their own seeded stream (``horizon``), so they never repeat a fixed-run item; item ``j`` at a
difficulty is the same in every run with the same seed. Answers go through the run's model
(response cache included), and every one is written to ``samples/<task>.horizon.jsonl``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

from harness.answers.budget import lost_to_budget, lost_to_context, target_tokens
from harness.answers.metrics import checked_metric
from harness.config import RunConfig
from harness.errors import HarnessError, ItemError
from harness.gaps.shift import MATCHED
from harness.lm import LM
from harness.run.plan import Condition, RunPlan
from harness.run.results import HorizonResult, SamplesFile
from harness.scoring.baselines import AnswerKey, constant_baseline
from harness.scoring.horizon import (
    Estimate,
    HorizonSearch,
    candidate_difficulties,
    fall_d50,
    run_search,
)
from harness.scoring.prepared import Prepared
from harness.scoring.records import SampleRecord
from harness.spec.buckets import Bucket
from harness.spec.horizon import WIDEN, WIDENINGS, HorizonSpec
from harness.spec.task import TaskSpec, TemplateSpec

BASELINE_ITEMS = 50  # items at the top of the range the item baseline is computed on


def horizon_path(output_dir: Path, task: str) -> Path:
    """``samples/<task>.horizon.jsonl``."""
    return output_dir / "samples" / f"{task}.horizon.jsonl"


def usable_range(plan: RunPlan, top: int | None = None, past: int = 0,
                 cond: Condition | None = None) -> tuple[int, str]:
    """The largest difficulty the search of ``cond`` (default: the unnamed condition) may try
    up to ``top`` (default ``horizon.max``), and what sets it (spec, limit, cap, generator,
    context): candidates above ``past`` are probed from the top down, one item each under
    every template, with the condition's own exemplars (a matched control's grow with the
    difficulty). The answer budget never ends the range: it grows with the targets
    (``answers/budget``), up to what the context leaves after each prompt."""
    h = plan.spec.horizon
    assert h is not None
    top = top or h.max
    reason = "spec" if top == h.max else "limit" if top == h.limit else "cap"
    for d in reversed([d for d in candidate_difficulties(h.min, top) if d > past]):
        try:
            probes = [p for tpl in plan.templates
                      for p in plan.prepared_at(d, 1, tpl, cond, stream="probe")]
        except (ItemError, HarnessError):
            reason = "generator"
            continue
        if not all(_fits(plan, p) for p in probes):
            reason = "context"
            continue
        return d, (("spec" if top == h.max else "limit" if top == h.limit else "cap")
                   if d == top else reason)
    if past:
        return past, reason
    raise HarnessError(f"{plan.task}: horizon: no difficulty from {h.min} to {h.max} fits "
                       f"(the generator's budget or the model's context)")


def _fits(plan: RunPlan, p: Prepared) -> bool:
    """Whether ``p``'s target fits what the context leaves after its prompt (``RunPlan.room``;
    an unknown context fits)."""
    room = plan.room(p)
    need = target_tokens(p.target, plan.count_tokens) if p.max_tokens is not None else 0
    return room is None or need <= room


def widening(plan: RunPlan, ends: list[tuple[int, str]], items: int,
             cond: Condition | None = None) -> Callable[[HorizonSearch], int]:
    """``run_search``'s ``extend``: a search still above its midpoint at the end of its range,
    where the task's range (not the context, the generator or ``horizon.limit``) ended it,
    goes on over a range ``WIDEN`` times wider, with ``items`` more answers; ``ends`` holds
    (range end, what set it), the last one current."""
    h = plan.spec.horizon
    assert h is not None

    def extend(search: HorizonSearch) -> int:
        hi, why = ends[-1]
        if why not in ("spec", "cap") or len(ends) > WIDENINGS:
            return 0
        top = hi * WIDEN if h.limit is None else min(hi * WIDEN, h.limit)
        if top <= hi:
            return 0
        wider, reason = usable_range(plan, top, past=hi, cond=cond)
        if wider <= hi:
            ends.append((hi, reason))
            return 0
        ends.append((wider, reason))
        search.widen(wider)
        return items

    return extend


def _baseline(spec: TaskSpec, prepared: Sequence[Prepared]) -> float:
    """The item baseline of the items at the top of the range (the task's declared one if
    any): what a constant answer scores where the model has nothing left."""
    if spec.gaps.baseline is not None:
        return spec.gaps.baseline
    keys = [AnswerKey(p.target, p.gold, len(p.choices or [])) for p in prepared]
    value = constant_baseline(keys, checked_metric(spec.scoring.metric), spec.scoring.extract)
    return 0.0 if value is None else value


def _id_answers(fixed: Sequence[SampleRecord], template: str) -> dict[float, tuple[float, int]]:
    """The fixed run's ID answers of ``template`` (ID exemplars) per difficulty."""
    out: dict[float, tuple[float, int]] = {}
    for r in fixed:
        if r.role == "ID" and r.template == template and r.condition == "":
            c, n = out.get(r.difficulty, (0.0, 0))
            out[r.difficulty] = (c + r.score, n + 1)
    return out


def fixed_curve(fixed: Sequence[SampleRecord], template: str, condition: str,
                buckets: Sequence[Bucket]) -> list[tuple[float, float]]:
    """The fixed run's accuracy per bucket, at each bucket's geometric middle difficulty (the
    ID buckets from the ID-exemplar answers: a matched control answers OOD items only)."""
    sums: dict[int, tuple[float, int]] = {}
    for r in fixed:
        if r.template != template or r.condition not in ("", condition):
            continue
        if condition and r.role == "OOD" and r.condition != condition:
            continue
        c, n = sums.get(r.bucket_index, (0.0, 0))
        sums[r.bucket_index] = (c + r.score, n + 1)
    return [(math.sqrt(max(b.lo, 1) * max(b.top, 1)), sums[b.index][0] / sums[b.index][1])
            for b in buckets if b.index in sums and sums[b.index][1]]


def search_task(plan: RunPlan, model: LM, cfg: RunConfig, fixed: SamplesFile,
                answer: Callable[[TaskSpec, list[Prepared]], list[SampleRecord]]
                ) -> list[HorizonResult]:
    """Every (template, condition) search of the plan's task; ``answer`` scores prepared items
    (the run's strategy and model) and writes their records."""
    spec = plan.spec
    h = spec.horizon
    assert h is not None
    ranges = {plan.base.id: usable_range(plan)}  # condition → (range end, what sets it)
    baseline = _baseline(spec, plan.prepared_at(ranges[plan.base.id][0], BASELINE_ITEMS,
                                                stream="baseline"))
    budget = cfg.horizon_items or h.items
    used: dict[int, int] = defaultdict(int)  # difficulty → search items drawn so far (task-wide)
    out = []
    for tpl in plan.templates:
        id_answers = _id_answers(fixed, tpl.id)
        for cond in plan.conditions:
            if cond.id == MATCHED and not any(r.condition == MATCHED for r in fixed):
                continue  # the control did not run (no measurable gap to split)
            if cond.id not in ranges:  # a matched control's exemplars may end it sooner
                ranges[cond.id] = usable_range(plan, cond=cond)
            hi, end = ranges[cond.id]
            search = HorizonSearch(h.min, hi, baseline, edge=plan.edge)
            for d, (c, n) in sorted(id_answers.items()):
                search.add(d, c, n)
            id_items, before = search.items, dict(search.tried)
            tally = [0, 0, 0]  # the search's answers, those lost to the budget, to the context
            sizes: list[int] = []  # answers per round, in the order asked

            def ask(rounds: list[tuple[int, int]], tpl: TemplateSpec = tpl,
                    cond: Condition = cond, tally: list[int] = tally,
                    sizes: list[int] = sizes) -> list[tuple[int, float, int]]:
                batch: list[Prepared] = []
                for d, n in rounds:
                    batch += plan.prepared_at(d, n, tpl, cond, start=used[d])
                    used[d] += n
                records = answer(spec, batch)
                sizes.append(len(records))
                tally[:] = [a + b for a, b in zip(tally, _lost_counts(records), strict=True)]
                per: dict[int, list[float]] = defaultdict(list)
                for p, r in zip(batch, records, strict=True):
                    per[int(p.item.difficulty)].append(r.score)
                return [(d, math.fsum(per[d]), len(per[d])) for d, _ in rounds]

            ends = [(hi, end)]
            more = max(h.round_items, budget // 2 // h.round_items * h.round_items)
            est = run_search(search, ask, budget, h.round_items, math.log(h.precision),
                             extend=widening(plan, ends, more, cond))
            curve = fixed_curve(fixed, tpl.id, cond.id, plan.buckets)
            points = [(int(d), c - before.get(d, (0.0, 0))[0], n - before.get(d, (0.0, 0))[1])
                      for d, (c, n) in sorted(search.tried.items())]
            res = _result(est, tpl.id, cond.id, plan.edge, ends[-1][1], id_items, points,
                          curve, h, search.check_items, sorted(id_answers.items()))
            extra = {"rounds": sizes, **_level(search, h), **_lost(tally)}
            out.append(res.model_copy(update=extra))
    return out


def _result(est: Estimate, template: str, condition: str, edge: float, end: str, id_items: int,
            points: list[tuple[int, float, int]], curve: list[tuple[float, float]],
            h: HorizonSpec, check_items: int, id_answers: list[tuple[float, tuple[float, int]]]
            ) -> HorizonResult:
    return HorizonResult(
        template=template, condition=condition, status=est.status, d50=est.d50,
        lower=est.lower, upper=est.upper, edge=edge, range_lo=est.range_lo,
        range_hi=est.range_hi, range_end=end, top=est.top, spread=est.spread,
        baseline=est.baseline,
        items=est.items - id_items, id_items=id_items,
        points=[(d, c, n) for d, c, n in points if n],
        fixed_crossing=fall_d50(est.top, est.baseline, curve),
        samples_file="", samples_sha256="", horizon=h.model_dump(mode="json"),
        overdispersion=est.overdispersion, shapes=list(est.shapes), check_items=check_items,
        fit_p=est.fit_p, id_points=[(d, c, n) for d, (c, n) in id_answers],
    )


def recomputed(h: HorizonResult, fixed: Sequence[SampleRecord],
               searched: Sequence[SampleRecord], buckets: Sequence[Bucket]) -> HorizonResult:
    """``h`` with every number the search's answers give computed again (``recompute``):
    what ``harness rescore`` writes, asking no model."""
    search = rebuilt(h, fixed, searched)
    est = search.verdict()
    ids = sorted(_id_answers(fixed, h.template).items())
    curve = fixed_curve(fixed, h.template, h.condition, buckets)
    return h.model_copy(update={
        "status": est.status, "d50": est.d50, "lower": est.lower, "upper": est.upper,
        "top": est.top, "spread": est.spread, "overdispersion": est.overdispersion,
        "shapes": list(est.shapes), "fit_p": est.fit_p,
        "id_points": [(d, c, n) for d, (c, n) in ids],
        "fixed_crossing": fall_d50(est.top, est.baseline, curve),
        **_level(search, HorizonSpec.model_validate(h.horizon)),
        **_lost(_lost_counts([r for r in searched if r.template == h.template
                              and r.condition == h.condition]))})


def _lost_counts(records: Sequence[SampleRecord]) -> list[int]:
    """How many of ``records`` there are, and how many were lost to the answer budget and to
    the model's context (``answers/budget``)."""
    return [len(records), sum(map(lost_to_budget, records)), sum(map(lost_to_context, records))]


def _lost(counts: Sequence[int]) -> dict[str, float]:
    """The shares of a search's answers lost to the budget and to the context (``counts``:
    ``_lost_counts``); 0 (left out of results.json) where none were."""
    n = max(counts[0], 1)
    return {"lost": counts[1] / n, "context_lost": counts[2] / n}


def _level(search: HorizonSearch, h: HorizonSpec) -> dict[str, object]:
    """``horizon.level``'s fields of a result (none when the task asks for no level)."""
    if h.level is None:
        return {}
    return {"level": h.level, "at_level": search.at_level(h.level)}


def recompute(h: HorizonResult, fixed: Sequence[SampleRecord],
              searched: Sequence[SampleRecord]) -> Estimate:
    """``rebuilt``'s verdict."""
    return rebuilt(h, fixed, searched).verdict()


def rebuilt(h: HorizonResult, fixed: Sequence[SampleRecord],
            searched: Sequence[SampleRecord]) -> HorizonSearch:
    """``h``'s search again from the samples files alone: the fixed run's ID answers of its
    template (one batch per difficulty) and the search's answers of its template and
    condition in the order they were asked, cut into its rounds (the sizes it recorded, or
    ``horizon.round_items`` answers each; the last ``check_items`` are the check round), one
    batch per difficulty and round, over its final range."""
    search = HorizonSearch(h.range_lo, h.range_hi, h.baseline, edge=h.edge)
    for d, (c, n) in sorted(_id_answers(fixed, h.template).items()):
        search.add(d, c, n)
    records = [r for r in searched if r.template == h.template and r.condition == h.condition]
    cut = len(records) - h.check_items
    if h.rounds:  # the sizes the search recorded (a widened search's rounds)
        starts = [sum(h.rounds[:k]) for k in range(len(h.rounds))]
        rounds = [records[a:min(a + n, cut)] for a, n in zip(starts, h.rounds, strict=True)
                  if a < cut]
    else:
        size = int(h.horizon.get("round_items", 40))
        rounds = [records[i:min(i + size, cut)] for i in range(0, cut, size)]
    for chunk, check in [*((r, False) for r in rounds), (records[cut:], True)]:
        per: dict[float, tuple[float, int]] = {}
        for r in chunk:
            c, n = per.get(r.difficulty, (0.0, 0))
            per[r.difficulty] = (c + r.score, n + 1)
        search.add_round([(d, c, n) for d, (c, n) in per.items()], check=check)
    return search
