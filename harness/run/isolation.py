"""Tasks fail alone.

A task whose generator, source, template, metric or analysis raises is reported as failed (one
line naming the task, the plugin whose code raised and the exception) while the run's other
tasks go on. Failures of the model itself (``ModelFault``) and of the output folder
(``harness.run.rundir.OutputError``) still end the run: every task would fail the same way. Which
plugins a run used is ``harness.run.plugin_use``.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Sequence
from typing import TypeVar

from harness import plugins
from harness.errors import HarnessError
from harness.lm import OnDone, WrapperLM
from harness.models.cache import call_inner
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.run.results import TaskFailure
from harness.tasks.refs import TaskRef

R = TypeVar("R")


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
            found = plugins.plugin_of_module(str(frame.f_globals.get("__name__", "")))
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
    """``task X (origin) failed [in plugin D==V]: error``, one line (the plugin left out when
    it is the task's own origin, the task not named again at the error's start)."""
    where = f" in {f.plugin.removeprefix('plugin:')}" if f.plugin and f.plugin != f.origin \
        else ""
    return f"task {f.task} ({f.origin}) failed{where}: {f.error.removeprefix(f'{f.task}: ')}"
