"""Instance + template + exemplars → the prompt text (or chat turns) and the target text."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import jinja2

from harness.errors import HarnessError
from harness.items import Instance
from harness.outputs import output_type
from harness.scoring.prepared import Prepared
from harness.spec.chat import ChatTurn
from harness.spec.task import TaskSpec, TemplateSpec
from harness.templates import TemplateRenderError, one_line, render


def target_text(spec: TaskSpec, template: TemplateSpec, item: Instance) -> str:
    """The reference answer as text: the one the output type fixes (multiple choice: the gold
    choice), else the template's or the target field's."""
    fixed = output_type(spec).target(spec, item)
    if fixed is not None:
        return fixed
    if template.target is not None:
        return _render(spec, template, "target", item)
    if spec.fields.target not in item.record:
        raise HarnessError(
            f"item {item.id}: no target field {spec.fields.target!r} (fields.target)"
        )
    return str(item.record[spec.fields.target])


def _render(spec: TaskSpec, template: TemplateSpec, key: str, item: Instance) -> str:
    """Render ``template.<key>`` for ``item``; any failure is one line naming the task, the
    template and the item."""
    src = template.prompt if key == "prompt" else template.target
    assert src is not None
    try:
        return render(src, item.record)
    except (TemplateRenderError, jinja2.TemplateError) as e:
        msg = e.message if isinstance(e, jinja2.TemplateError) else str(e)
        raise HarnessError(f"task {spec.name}: template {template.id!r} ({key}), item {item.id}: "
                           f"{one_line(msg or type(e).__name__)}") from None


def build_turns(
    spec: TaskSpec, template: TemplateSpec, item: Instance, exemplars: Sequence[Instance]
) -> list[ChatTurn]:
    """Exemplars as user/assistant turns, then the question as the last user turn."""
    turns: list[ChatTurn] = []
    for ex in exemplars:
        turns.append(
            ChatTurn(role="user", content=_render(spec, template, "prompt", ex))
        )
        turns.append(ChatTurn(role="assistant", content=target_text(spec, template, ex)))
    turns.append(
        ChatTurn(role="user", content=_render(spec, template, "prompt", item))
    )
    return turns


def build_prompt(
    spec: TaskSpec, template: TemplateSpec, item: Instance, exemplars: Sequence[Instance]
) -> str:
    """Plain-text prompt: exemplars (prompt + delimiter + answer), separator, then the question."""
    fs = spec.fewshot
    shots = [
        _render(spec, template, "prompt", ex) + fs.target_delimiter
        + target_text(spec, template, ex)
        for ex in exemplars
    ]
    return fs.separator.join([*shots, _render(spec, template, "prompt", item)])


def prepare_item(spec: TaskSpec, task: str, tpl: TemplateSpec, condition: str, item: Instance,
                 shots: Sequence[Instance], chat: Callable[[list[ChatTurn]], str] | None = None,
                 position: int = 0) -> Prepared:
    """One item under one template with its exemplars ``shots``: the exact prompt (rendered
    through the model's chat template ``chat`` when the run applies one), choices, target and
    gold."""
    if chat is not None:
        prompt = chat(build_turns(spec, tpl, item, shots))
    else:
        prompt = build_prompt(spec, tpl, item, shots)
    out = output_type(spec)
    return Prepared(
        task=task, item=item, template=tpl.id, condition=condition,
        fewshot_ids=[s.id for s in shots],
        meta={f: item.record[f] for f in spec.fields.meta if f in item.record},
        prompt=prompt, choices=out.choices(spec, item),
        target=target_text(spec, tpl, item), gold=out.gold(spec, item), position=position,
    )
