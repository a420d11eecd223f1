"""Responses → per-sample records: extraction and the metric (generation) or argmax (MC)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.scoring.extract import extract
from harness.scoring.metrics import get_metric
from harness.scoring.records import ModelCall, SampleRecord
from harness.tasks.instances import Instance
from harness.tasks.spec import TaskSpec


@dataclass(frozen=True)
class Prepared:
    """One item under one template, ready for the model."""

    task: str  # task address
    item: Instance  # the item
    template: str  # template id
    condition: str  # few-shot condition id ("" for none)
    fewshot_ids: list[str]  # exemplar ids in prompt order
    prompt: str  # exact prompt text
    target: str  # reference answer text
    choices: list[str] | None = None  # MC choices
    gold: int | None = None  # MC gold index
    meta: dict[str, Any] = field(default_factory=dict)  # record fields named in fields.meta
    position: int = 0  # the item's position in its InstanceSet's items


def _base(p: Prepared) -> dict[str, object]:
    return {
        "task": p.task, "id": p.item.id, "template": p.template, "condition": p.condition,
        "meta": p.meta, "fewshot_ids": p.fewshot_ids,
        "difficulty": p.item.difficulty, "bucket": p.item.bucket.label,
        "bucket_index": p.item.bucket.index, "role": p.item.bucket.role,
        "prompt": p.prompt, "target": p.target,
    }


def score_generation(spec: TaskSpec, p: Prepared, output: str) -> SampleRecord:
    """Score a generated answer with the task's extraction and metric."""
    answer = extract(output, spec.scoring.extract)
    score = get_metric(spec.scoring.metric)(answer, p.target)
    call = ModelCall(kind="generate", prompt=p.prompt, output=output)
    return SampleRecord.model_validate(
        {**_base(p), "output": output, "extracted": answer, "score": score, "calls": [call]}
    )


def score_choices(spec: TaskSpec, p: Prepared, continuations: Sequence[str],
                  logprobs: Sequence[float]) -> SampleRecord:
    """Score a multiple-choice item: correct when the gold choice has the highest log-likelihood
    (ties go to the lowest index)."""
    assert p.choices is not None and p.gold is not None
    best = max(range(len(logprobs)), key=lambda i: (logprobs[i], -i))
    call = ModelCall(kind="loglikelihood", prompt=p.prompt, logprobs=list(logprobs))
    return SampleRecord.model_validate({
        **_base(p), "output": p.choices[best], "extracted": p.choices[best],
        "score": 1.0 if best == p.gold else 0.0, "choices": p.choices,
        "choice_logprobs": list(logprobs), "gold_index": p.gold, "calls": [call],
    })
