"""Live progress of model calls: a wrapper that counts responses as the backend reports them.

``ProgressLM`` sits in front of the model (and its cache); each method call becomes one bar
("lengthgen/addition generate 120/400"), advanced through the backend's ``on_done`` reports.
The CLI draws the bars with rich on stderr; the Python API passes no reporter and pays nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

from harness.models.base import LM, OnDone, WrapperLM
from harness.models.cache import call_inner
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)

Req = TypeVar("Req")
Res = TypeVar("Res")


class Reporter(Protocol):
    """Receives progress: one ``start`` per model call, ``advance`` per finished response."""

    def start(self, label: str, total: int) -> None: ...
    def advance(self, n: int) -> None: ...
    def finish(self) -> None: ...


class ProgressLM(WrapperLM):
    """Forwards every call to *inner*, reporting finished responses to *reporter*."""

    def __init__(self, inner: LM, reporter: Reporter) -> None:
        super().__init__(inner)
        self.reporter = reporter
        self.label = ""  # set by the runner to the task being run

    def _call(self, kind: str, method: Callable[..., list[Res]], requests: Sequence[Req],
              on_done: OnDone[Res] | None) -> list[Res]:
        self.reporter.start(f"{self.label} {kind}".strip(), len(requests))
        done: set[int] = set()

        def tick(i: int, res: Res) -> None:
            if i not in done:
                done.add(i)
                self.reporter.advance(1)
            if on_done:
                on_done(i, res)

        try:
            out = call_inner(method, list(requests), tick)
            self.reporter.advance(len(requests) - len(done))
        finally:
            self.reporter.finish()
        return out

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        return self._call("generate", self.inner.generate, requests, on_done)

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        return self._call("loglikelihood", self.inner.loglikelihood, requests, on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return self._call("rolling", self.inner.loglikelihood_rolling, requests, on_done)



class RichReporter:
    """Progress bars on stderr (hidden when stderr is not a terminal, e.g. in CI logs)."""

    def __init__(self) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        console = Console(stderr=True)
        self._progress = Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
            TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=True,
            disable=not console.is_terminal,
        )
        self._task: object = None

    def start(self, label: str, total: int) -> None:
        self._progress.start()
        self._task = self._progress.add_task(label, total=total)

    def advance(self, n: int) -> None:
        if self._task is not None and n:
            self._progress.advance(self._task, n)  # type: ignore[arg-type]

    def finish(self) -> None:
        if self._task is not None:
            self._progress.remove_task(self._task)  # type: ignore[arg-type]
            self._task = None
        self._progress.stop()
