"""Instance + template + exemplars → the prompt text (or chat turns) and the target text."""

from __future__ import annotations

from collections.abc import Sequence

import jinja2

from harness.errors import HarnessError
from harness.tasks.chat import ChatTurn
from harness.tasks.instances import Instance
from harness.tasks.spec import MultipleChoiceOutput, TaskSpec, TemplateSpec
from harness.tasks.templates import TemplateRenderError, one_line, render


def choices_of(spec: TaskSpec, item: Instance) -> list[str] | None:
    """The item's answer choices (multiple choice), else None."""
    out = spec.output
    if not isinstance(out, MultipleChoiceOutput):
        return None
    if out.choices is not None:
        return list(out.choices)
    assert out.choices_field is not None
    value = item.record.get(out.choices_field)
    if not isinstance(value, list) or not value:
        raise HarnessError(
            f"item {item.id}: output.choices_field {out.choices_field!r} is not a list"
        )
    return [str(c) for c in value]


def gold_index(spec: TaskSpec, item: Instance, choices: Sequence[str]) -> int:
    """Index of the correct choice: the target field holds an index or the choice text."""
    raw = item.record.get(spec.fields.target)
    if isinstance(raw, int) and 0 <= raw < len(choices):
        return raw
    if str(raw) in choices:
        return list(choices).index(str(raw))
    raise HarnessError(f"item {item.id}: target {raw!r} is neither a choice index nor a choice")


def target_text(spec: TaskSpec, template: TemplateSpec, item: Instance) -> str:
    """The reference answer as text (MC: the gold choice; else the template's or field's)."""
    choices = choices_of(spec, item)
    if choices is not None:
        return choices[gold_index(spec, item, choices)]
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
