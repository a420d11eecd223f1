"""Output types: how a task's answers are given and scored, one module each.

``output_type(spec)`` is the ``OutputType`` of a task's ``output.type``; the runner, the
strategies, the task checks and the test oracle ask it, never the spec model's class.
``OUTPUT_TYPES`` is their registry, filled from the ``OutputSpec`` union of the task-file spec:
each member names (``handler``) the ``"module:object"`` of its ``OutputType``, imported the first
time a task of that type runs. Adding one is one module here with its ``OutputType`` subclass
and its instance, plus its spec model in that union (the one registration). The types are built
in only: a plugin cannot extend the task-file schema's union, so there is no entry-point group.
"""

from __future__ import annotations

from typing import Any, get_args

from harness.outputs.base import Oracle, OutputType
from harness.registry import Registry
from harness.spec.task import OutputSpec, TaskSpec, type_tags


def _as_output_type(name: str, obj: object) -> OutputType[Any]:
    if not isinstance(obj, OutputType) or obj.name != name:  # pragma: no cover - wiring
        raise TypeError(f"output type {name!r}: {obj!r} is not its OutputType")
    return obj


# every output type by its ``output.type`` tag, in the order of the union
OUTPUT_TYPES: Registry[OutputType[Any]] = Registry(
    "output type", None, list_known=True,
    entries={type_tags(m)[0]: m.handler for m in get_args(get_args(OutputSpec)[0])},
    from_object=_as_output_type)

__all__ = ["OUTPUT_TYPES", "Oracle", "OutputType", "output_type"]


def output_type(spec: TaskSpec) -> OutputType[Any]:
    """The output type of ``spec`` (its ``output.type``)."""
    return OUTPUT_TYPES.get(spec.output.type)
