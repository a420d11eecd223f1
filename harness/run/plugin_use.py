"""Which plugins a run used, recorded in results.json (``environment.plugins``): exactly the
distributions whose tasks or code it ran. Plugin code is recognised by its module
(``harness.plugins.plugin_of_module``)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterable

from harness import plugins
from harness.analyses.registry import ANALYSES
from harness.config import RunConfig
from harness.errors import HarnessError
from harness.gaps.registry import get_gap
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.refs import TaskRef


def _code_of(spec: TaskSpec) -> Iterable[object]:
    """The registry objects (generators, extractor, metric, gaps, analyses) a task's spec runs."""
    from harness.answers.extract import get_extractor
    from harness.answers.metrics import get_metric
    from harness.generators.registry import get_generator

    for source in (spec.source, spec.fewshot.source):
        if isinstance(source, GeneratorSource):
            yield get_generator(source.name).fn
    yield get_extractor(spec.scoring.extract.kind).fn
    for name in (spec.scoring.metric, *spec.scoring.extra_metrics):
        yield get_metric(name)
    for name in spec.gaps.report:
        yield get_gap(name).fn
    for a in spec.analyses:
        yield ANALYSES.get(a.name).fn


def used_plugins(cfg: RunConfig, tasks: Iterable[tuple[TaskRef, TaskSpec]]) -> dict[str, str]:
    """Distribution → version of exactly the plugins whose tasks or code the run used: those
    providing its tasks, its generators, extractors, metrics, gaps and analyses, its strategy
    and its model backend."""
    from harness.strategies.registry import STRATEGIES

    used: dict[str, str] = {}
    code: list[object] = []
    for ref, spec in tasks:
        if ref.is_plugin:
            dist, _, ver = ref.origin.removeprefix("plugin:").rpartition("==")
            used[dist] = ver
        with contextlib.suppress(HarnessError):  # a name that no longer resolves: nothing ran
            code += list(_code_of(spec))
    with contextlib.suppress(HarnessError):
        strategy = STRATEGIES.get(cfg.strategy)
        code.append(getattr(strategy, "fn", strategy))  # a chain's function, or the strategy
    for obj in code:
        owner = plugins.plugin_of_module(str(getattr(obj, "__module__", "") or ""))
        if owner is not None:
            used[owner.dist] = owner.version
    prefix = cfg.model.partition(":")[0]
    for p in plugins.discover(plugins.MODELS):
        if p.name == prefix and plugins.status(p) == "ok":
            used[p.dist] = p.version
    return dict(sorted(used.items()))
