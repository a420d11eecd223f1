"""Instance + template + exemplars → the prompt text (or chat turns) and the target text."""

from __future__ import annotations

from collections.abc import Sequence

import jinja2

from harness.errors import HarnessError
from harness.items import Instance
from harness.outputs import output_type
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
