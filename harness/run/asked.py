"""What the runner tells the model of the items it is about to ask (``LM.announce``): one
``AskedItem`` per prepared prompt, before each chunk of a task's prompts and each batch of a
horizon search. Real models ignore it; the planted-truth backend (``planted:``) answers from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.requests import AskedItem
from harness.run.plan import RunPlan
from harness.scoring.baselines import candidate_answer
from harness.scoring.prepared import Prepared
from harness.spec.task import MultipleChoiceOutput, TaskSpec


def compared_answer(spec: TaskSpec, target: str) -> str:
    """``target`` as the metric compares it (``baselines.candidate_answer``: MATH's last
    ``\boxed{}``); the target itself for multiple choice, or where a plugin's extractor fails
    on a reference."""
    if isinstance(spec.output, MultipleChoiceOutput):
        return target
    try:
        return candidate_answer(target, spec.scoring.extract)
    except Exception:  # noqa: BLE001 - a plugin's extractor on a reference: the target stands
        return target


def asked_items(plan: RunPlan, spec: TaskSpec, prepared: Sequence[Prepared],
                searched: bool = False) -> list[AskedItem]:
    """The ``AskedItem`` of each of ``prepared`` (``searched``: a horizon search's items)."""
    sc = spec.scoring
    table = tuple((b.lo, b.top) for b in plan.buckets)
    matched = {c.id for c in plan.conditions if c.spec.matched}
    prefix = spec.output.choice_prefix if isinstance(spec.output, MultipleChoiceOutput) else ""
    return [AskedItem(
        prompt=p.prompt, target=p.target, answer=compared_answer(spec, p.target), task=p.task,
        item=p.item.id, template=p.template, condition=p.condition,
        matched=p.condition in matched, shots=len(p.fewshot_ids),
        difficulty=float(p.item.difficulty), bucket=p.item.bucket.label,
        bucket_index=p.item.bucket.index, role=p.item.bucket.role, searched=searched,
        seed=plan.seed, buckets=table, metric=sc.metric, extract=sc.extract.kind,
        pattern=sc.extract.pattern,
        choices=None if p.choices is None else tuple(p.choices), gold=p.gold,
        choice_prefix=prefix) for p in prepared]
