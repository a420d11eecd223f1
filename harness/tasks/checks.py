"""Checks a validated spec against the registries (generators, metrics) and its own templates."""

from __future__ import annotations

from pathlib import Path

import jinja2

from harness.errors import TaskSpecError, UnknownNameError
from harness.tasks.buckets import build_buckets
from harness.tasks.spec import GeneratorSource, TaskSpec
from harness.tasks.templates import compile_template


def check_spec(spec: TaskSpec, path: Path) -> None:
    """Raise ``TaskSpecError`` (``file: key.path: problem``) for problems the schema can't see."""
    try:
        build_buckets(spec.buckets, spec.roles)
    except ValueError as e:
        raise TaskSpecError(f"{path}: {e}") from None
    for i, t in enumerate(spec.templates):
        for key, src in (("prompt", t.prompt), ("target", t.target)):
            if src is None:
                continue
            try:
                compile_template(src)
            except jinja2.TemplateSyntaxError as e:
                raise TaskSpecError(
                    f"{path}: templates.{i}.{key}: template syntax error: {e.message} "
                    f"(template line {e.lineno})"
                ) from None
    from harness.generators.registry import get_generator
    from harness.scoring.metrics import get_metric

    if isinstance(spec.source, GeneratorSource):
        try:
            get_generator(spec.source.name)
        except UnknownNameError as e:
            raise TaskSpecError(f"{path}: source.name: {e}") from None
    try:
        get_metric(spec.scoring.metric)
    except UnknownNameError as e:
        raise TaskSpecError(f"{path}: scoring.metric: {e}") from None
    if spec.scoring.extract.kind == "regex" and not spec.scoring.extract.pattern:
        raise TaskSpecError(f"{path}: scoring.extract.pattern: required when kind is 'regex'")
