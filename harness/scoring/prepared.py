"""``Prepared``: one item under one template, ready for the model, and the fields of its sample
record that every output type (``harness.outputs``) fills the same way."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harness.errors import HarnessError, ItemError
from harness.items import Instance
from harness.plugins import one_line


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
    max_tokens: int | None = None  # generation: the answer budget (answers/budget); None: the
    # task's max_tokens
    context_bound: bool = False  # the budget is what the model's context leaves after the
    # prompt, less than the bucket's: an answer cut there ran out of context, not budget


def record_fields(p: Prepared) -> dict[str, object]:
    """The fields of ``p``'s sample record that do not depend on the answer (an output type
    adds the output, extracted answer, score and calls)."""
    return {
        "task": p.task, "id": p.item.id, "template": p.template, "condition": p.condition,
        "meta": p.meta, "fewshot_ids": p.fewshot_ids,
        "difficulty": p.item.difficulty, "bucket": p.item.bucket.label,
        "bucket_index": p.item.bucket.index, "role": p.item.bucket.role,
        "prompt": p.prompt, "target": p.target, "context_bound": p.context_bound,
    }


def item_error(p: Prepared, what: str, e: Exception, answer: str | None = None) -> ItemError:
    """``what`` (e.g. ``metric 'm'``) failed with ``e`` on ``p`` (scoring the model's ``answer``,
    where it did): the error naming the item (raise it ``from e``, so its stack can be shown)."""
    text = " ".join(str(e).split()) if isinstance(e, HarnessError) else f"{what}: {one_line(e)}"
    return ItemError(f"{p.task}: {text}", p.item.id, p.item.bucket.label, p.template, answer)
