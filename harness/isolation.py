"""Tasks fail alone, and the run records exactly the plugins it used.

A task whose generator, source, template, metric or analysis raises is reported as failed (one
line naming the task, the plugin whose code raised and the exception) while the run's other
tasks go on. Failures of the model itself (``ModelFault``) and of the output folder
(``harness.rundir.OutputError``) still end the run: every task would fail the same way.

Plugin code is recognised by its module: a module inside the top-level package of an installed
plugin's entry point belongs to that plugin (the harness's own package never does).
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from harness import plugins
from harness.analyses.registry import ANALYSES
from harness.config import RunConfig
from harness.errors import HarnessError
from harness.models.base import OnDone, WrapperLM
from harness.models.cache import call_inner
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.results import TaskFailure
from harness.scoring.gap_registry import get_gap
from harness.tasks.refs import TaskRef
from harness.tasks.spec import GeneratorSource, TaskSpec

R = TypeVar("R")
_OWN_PACKAGE = "harness"


class ModelFault(Exception):
    """The model raised (``__cause__``: what it raised): the run ends, no task is blamed."""


class GuardedLM(WrapperLM):
    """Forwards to *inner*; anything the model raises comes out as ``ModelFault``."""

    def _call(self, op: Callable[[], R]) -> R:
        try:
            return op()
        except Exception as e:
            raise ModelFault(str(e)) from e

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        return self._call(lambda: call_inner(self.inner.generate, list(requests), on_done))

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        return self._call(lambda: call_inner(self.inner.loglikelihood, list(requests), on_done))

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        inner = self.inner.loglikelihood_rolling
        return self._call(lambda: call_inner(inner, list(requests), on_done))

    def count_tokens(self, text: str) -> int | None:
        return self._call(lambda: self.inner.count_tokens(text))


def _top(module: str) -> str:
    return module.partition(".")[0]


def plugin_of_module(module: str) -> plugins.Plugin | None:
    """The installed plugin whose package holds ``module`` (None: the harness's or no plugin's).
    Several entry points of one distribution share its package; the first one is returned."""
    top = _top(module)
    if not top or top == _OWN_PACKAGE:
        return None
    for p in plugins.discover_all():
        if _top(p.value.partition(":")[0].strip()) == top:
            return p
    return None


def blame(exc: BaseException) -> plugins.Plugin | None:
    """The plugin whose code raised ``exc``: the innermost traceback frame in a plugin's
    package (causes and contexts searched too); None when no plugin code was running."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        for frame, _ in reversed(list(traceback.walk_tb(e.__traceback__))):
            found = plugin_of_module(str(frame.f_globals.get("__name__", "")))
            if found is not None:
                return found
        todo += [e.__cause__, e.__context__]
    return None


def failure(ref: TaskRef, exc: BaseException) -> TaskFailure:
    """The results.json entry of a task that raised ``exc``."""
    plugin = blame(exc)
    msg = " ".join(str(exc).split())
    error = msg if isinstance(exc, HarnessError) and msg else plugins.one_line(exc)
    return TaskFailure(task=ref.address, origin=ref.origin,
                       plugin=plugin.origin if plugin else None, error=error)


def failure_line(f: TaskFailure) -> str:
    """``task X (origin) failed [in plugin D==V]: error``, one line."""
    where = f" in {f.plugin.removeprefix('plugin:')}" if f.plugin else ""
    return f"task {f.task} ({f.origin}) failed{where}: {f.error}"


def _code_of(spec: TaskSpec) -> Iterable[object]:
    """The registry objects (generators, extractor, metric, gaps, analyses) a task's spec runs."""
    from harness.generators.registry import get_generator
    from harness.scoring.extract import get_extractor
    from harness.scoring.metrics import get_metric

    for source in (spec.source, spec.fewshot.source):
        if isinstance(source, GeneratorSource):
            yield get_generator(source.name).fn
    yield get_extractor(spec.scoring.extract.kind).fn
    yield get_metric(spec.scoring.metric)
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
        owner = plugin_of_module(str(getattr(obj, "__module__", "") or ""))
        if owner is not None:
            used[owner.dist] = owner.version
    prefix = cfg.model.partition(":")[0]
    for p in plugins.discover(plugins.MODELS):
        if p.name == prefix and plugins.status(p) == "ok":
            used[p.dist] = p.version
    return dict(sorted(used.items()))
