"""Output types: how a task's answers are given and scored, one module each.

``output_type(spec)`` is the ``OutputType`` of a task's ``output.type``; the runner, the
strategies, the task checks and the test oracle ask it, never the spec model's class. The
types are built in only: each needs its spec model in the ``OutputSpec`` union of
``harness.tasks.spec`` (the task-file schema), which a plugin cannot extend, so there is no
entry-point group for them. Adding one: its spec model in that union, a module here with its
``OutputType`` subclass, and its instance in ``OUTPUT_TYPES`` (a test checks that the two lists
match).
"""

from __future__ import annotations

from typing import Any

from harness.outputs.base import Oracle, OutputType
from harness.outputs.generate import GENERATE
from harness.outputs.multiple_choice import MULTIPLE_CHOICE
from harness.tasks.spec import TaskSpec

# every output type by its ``output.type`` tag
OUTPUT_TYPES: dict[str, OutputType[Any]] = {t.name: t for t in (GENERATE, MULTIPLE_CHOICE)}

__all__ = ["OUTPUT_TYPES", "Oracle", "OutputType", "output_type"]


def output_type(spec: TaskSpec) -> OutputType[Any]:
    """The output type of ``spec`` (its ``output.type``)."""
    return OUTPUT_TYPES[spec.output.type]
