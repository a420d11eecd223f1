"""Checks a validated spec against the registries (generators, metrics, extractors, gaps,
analyses) and its own templates."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import jinja2

from harness.errors import HarnessError, TaskSpecError, UnknownNameError
from harness.generators.registry import get_generator
from harness.spec.buckets import build_buckets
from harness.spec.scoring import AnalysisSpec
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.item_checks import check_generator, check_numbers, check_work
from harness.templates import check_template, one_line


class _Problems:
    """Every problem found in one file, one line each (a check that fails does not stop the
    checks that do not depend on it)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def run(self, check: Callable[..., object], *args: Any) -> bool:
        """Run ``check(*args)``; a ``TaskSpecError`` becomes problems. Whether it passed."""
        try:
            check(*args)
        except TaskSpecError as e:
            self.lines.extend(line for line in str(e).splitlines() if line not in self.lines)
            return False
        return True

    def add(self, line: str) -> None:
        self.lines.append(line)


def check_spec(spec: TaskSpec, path: Path | str) -> None:
    """Raise ``TaskSpecError`` (``file: key.path: problem``, one line per problem) for problems
    the schema can't see; every problem of the file is reported, not only the first."""
    found = _Problems()
    buckets_ok = found.run(check_numbers, spec, path) and found.run(_check_buckets, spec, path)
    templates_ok = all([found.run(_check_syntax, src, f"{path}: templates.{i}.{key}")
                        for i, t in enumerate(spec.templates)
                        for key, src in (("prompt", t.prompt), ("target", t.target))
                        if src is not None])
    from harness.answers.extract import get_extractor
    from harness.answers.metrics import get_metric
    from harness.gaps.registry import get_gap

    if isinstance(spec.source, GeneratorSource):
        gen = _named(found, get_generator, spec.source.name, f"{path}: source.name")
        if (gen is not None and buckets_ok and templates_ok  # (the next read the templates)
                and found.run(_check_grid, spec.source, gen.fn, path)):
            found.run(check_generator, spec, gen, path)
    if isinstance(spec.fewshot.source, GeneratorSource):
        pool_gen = _named(found, get_generator, spec.fewshot.source.name,
                          f"{path}: fewshot.source.name")
        if pool_gen is not None and buckets_ok:
            found.run(check_work, spec, spec.fewshot.source, pool_gen, path, "fewshot.source")
    for key, metric in spec.scoring.metric_keys():
        _named(found, get_metric, metric, f"{path}: {key}")
    kind = spec.scoring.extract.kind
    extractor = _named(found, get_extractor, kind, f"{path}: scoring.extract.kind")
    if extractor is not None and extractor.needs_pattern and not spec.scoring.extract.pattern:
        found.add(f"{path}: scoring.extract.pattern: required when kind is {kind!r}")
    for i, name in enumerate(spec.gaps.report):
        _named(found, get_gap, name, f"{path}: gaps.report.{i}")
    if buckets_ok:
        found.run(_check_conditions, spec, path)
    for i, a in enumerate(spec.analyses):
        found.run(_check_analysis, a, f"{path}: analyses.{i}")
    if found.lines:
        raise TaskSpecError("\n".join(found.lines))


_T = TypeVar("_T")


def _named(found: _Problems, get: Callable[[str], _T], name: str, where: str) -> _T | None:
    """``get(name)`` from a registry; an unknown name, or a plugin that failed to load, is a
    problem at ``where`` (``file: key``) and gives None."""
    try:
        return get(name)
    except HarnessError as e:
        hint = _install_hint(where) if isinstance(e, UnknownNameError) else ""
        found.add(f"{where}: {e}{hint}")
        return None


def _install_hint(where: str) -> str:
    """For a name no registry knows, in a task file of a package checkout that is not
    installed: that its own blocks are registered only once it is."""
    from harness.tasks.namespaces import uninstalled_package

    found = uninstalled_package(Path(where.partition(": ")[0]))
    if found is None:
        return ""
    root, name = found
    cwd = Path.cwd()
    shown = root.relative_to(cwd).as_posix() if root.is_relative_to(cwd) and root != cwd else root
    return (f"; the package {name} this file belongs to is not installed, so what it registers "
            f"is not known yet: pip install -e {shown}")


def _check_buckets(spec: TaskSpec, path: Path | str) -> None:
    try:
        build_buckets(spec.buckets, spec.roles)
    except ValueError as e:
        raise TaskSpecError(f"{path}: {e}") from None


def _check_syntax(src: str, where: str) -> None:
    try:
        check_template(src)
    except jinja2.TemplateSyntaxError as e:
        raise TaskSpecError(f"{where}: template syntax error: {one_line(str(e.message))} "
                            f"(template line {e.lineno})") from None


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


def _check_conditions(spec: TaskSpec, path: Path | str) -> None:
    from harness.items import labels

    known = {b.label for b in build_buckets(spec.buckets, spec.roles)}
    ids = [c.id for c in spec.fewshot.conditions]
    if len(set(ids)) != len(ids):
        raise TaskSpecError(f"{path}: fewshot.conditions: duplicate condition ids")
    if spec.fewshot.matched_control and spec.fewshot.conditions:
        raise TaskSpecError(f"{path}: fewshot.matched_control: a task that declares conditions "
                            "keeps its own design; add a condition with matched: true instead")
    if spec.fewshot.matched_control and not spec.fewshot.k:
        raise TaskSpecError(f"{path}: fewshot.matched_control: needs exemplars (fewshot.k > 0)")
    for i, cond in enumerate(spec.fewshot.conditions):
        for key in ("pool", "evaluate"):
            unknown = sorted((labels(getattr(cond, key)) or set()) - known)
            if unknown:
                raise TaskSpecError(f"{path}: fewshot.conditions.{i}.{key}: unknown bucket "
                                    f"label(s) {unknown}; buckets are {sorted(known)}")


def _check_analysis(a: AnalysisSpec, where: str) -> None:
    from harness.analyses.registry import get_analysis

    try:
        fn = get_analysis(a.name)
    except HarnessError as e:
        raise TaskSpecError(f"{where}.name: {e}") from None
    problems = fn.check_params(dict(a.params))
    if problems:
        raise TaskSpecError(f"{where}.params.{problems[0]}"
                            + (f" (and: {'; '.join(problems[1:])})" if problems[1:] else ""))
