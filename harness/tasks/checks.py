"""Checks a validated spec against the registries (generators, metrics, extractors, gaps,
analyses) and its own templates."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jinja2

from harness.errors import HarnessError, TaskSpecError
from harness.generators.registry import get_generator
from harness.spec.buckets import build_buckets
from harness.spec.task import GeneratorSource, TaskSpec
from harness.tasks.item_checks import check_generator, check_numbers, check_work
from harness.templates import check_template, one_line


def check_spec(spec: TaskSpec, path: Path | str) -> None:
    """Raise ``TaskSpecError`` (``file: key.path: problem``) for problems the schema can't see."""
    check_numbers(spec, path)
    try:
        build_buckets(spec.buckets, spec.roles)
    except ValueError as e:
        raise TaskSpecError(f"{path}: {e}") from None
    for i, t in enumerate(spec.templates):
        for key, src in (("prompt", t.prompt), ("target", t.target)):
            if src is None:
                continue
            try:
                check_template(src)
            except jinja2.TemplateSyntaxError as e:
                raise TaskSpecError(
                    f"{path}: templates.{i}.{key}: template syntax error: "
                    f"{one_line(str(e.message))} "
                    f"(template line {e.lineno})"
                ) from None
    from harness.answers.extract import get_extractor
    from harness.answers.metrics import get_metric
    from harness.gaps.registry import get_gap

    if isinstance(spec.source, GeneratorSource):
        try:
            gen = get_generator(spec.source.name)
        except HarnessError as e:  # unknown name, or a plugin that failed to load
            raise TaskSpecError(f"{path}: source.name: {e}") from None
        _check_grid(spec.source, gen.fn, path)
        check_generator(spec, gen, path)
    if isinstance(spec.fewshot.source, GeneratorSource):
        try:
            pool_gen = get_generator(spec.fewshot.source.name)
        except HarnessError as e:
            raise TaskSpecError(f"{path}: fewshot.source.name: {e}") from None
        check_work(spec, spec.fewshot.source, pool_gen, path, "fewshot.source")
    try:
        get_metric(spec.scoring.metric)
    except HarnessError as e:  # unknown name, or a plugin that failed to load
        raise TaskSpecError(f"{path}: scoring.metric: {e}") from None
    kind = spec.scoring.extract.kind
    try:
        extractor = get_extractor(kind)
    except HarnessError as e:  # unknown name, or a plugin that failed to load
        raise TaskSpecError(f"{path}: scoring.extract.kind: {e}") from None
    if extractor.needs_pattern and not spec.scoring.extract.pattern:
        raise TaskSpecError(f"{path}: scoring.extract.pattern: required when kind is {kind!r}")
    for i, name in enumerate(spec.gaps.report):
        try:
            get_gap(name)
        except HarnessError as e:  # unknown name, or a plugin that failed to load
            raise TaskSpecError(f"{path}: gaps.report.{i}: {e}") from None
    _check_conditions_and_analyses(spec, path)


def _check_grid(src: GeneratorSource, fn: Callable[..., Any], path: Path | str) -> None:
    """``source.grid``: non-empty value lists, each key a parameter the generator takes."""
    sig = inspect.signature(fn)
    open_kwargs = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    for key, values in src.grid.items():
        if not values:
            raise TaskSpecError(f"{path}: source.grid.{key}: needs at least one value")
        if not open_kwargs and key not in sig.parameters:
            raise TaskSpecError(f"{path}: source.grid.{key}: generator {src.name!r} takes no "
                                f"parameter {key!r}")


def _check_conditions_and_analyses(spec: TaskSpec, path: Path | str) -> None:
    from harness.analyses.registry import get_analysis
    from harness.items import labels

    known = {b.label for b in build_buckets(spec.buckets, spec.roles)}
    ids = [c.id for c in spec.fewshot.conditions]
    if len(set(ids)) != len(ids):
        raise TaskSpecError(f"{path}: fewshot.conditions: duplicate condition ids")
    for i, cond in enumerate(spec.fewshot.conditions):
        for key in ("pool", "evaluate"):
            unknown = sorted((labels(getattr(cond, key)) or set()) - known)
            if unknown:
                raise TaskSpecError(f"{path}: fewshot.conditions.{i}.{key}: unknown bucket "
                                    f"label(s) {unknown}; buckets are {sorted(known)}")
    for i, a in enumerate(spec.analyses):
        try:
            fn = get_analysis(a.name)
        except HarnessError as e:
            raise TaskSpecError(f"{path}: analyses.{i}.name: {e}") from None
        problems = fn.check_params(dict(a.params))
        if problems:
            raise TaskSpecError(f"{path}: analyses.{i}.params.{problems[0]}"
                                + (f" (and: {'; '.join(problems[1:])})" if problems[1:] else ""))
