"""Progress of a run: how many prompts it will send, live bars, and the time left.

``RunClock`` counts every task's prompts once the model is loaded, before the first model call
("1,560 prompts in 13 tasks"), and after each task estimates the time left from the prompts
done so far ("about 2 min 10 s left (estimated)"); a task is the run's first chunk unless it has
more than ``--chunk-size`` prompts.

``ProgressLM`` sits in front of the model (and its cache); each method call becomes one bar
("lengthgen/addition generate 120/400"), advanced through the backend's ``on_done`` reports.
The CLI draws the bars with rich on stderr; the Python API passes no reporter and pays nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, TypeVar

from harness.lm import LM, OnDone, WrapperLM
from harness.models.cache import call_inner
from harness.requests import (
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)

if TYPE_CHECKING:
    from harness.config import RunConfig
    from harness.spec.task import TaskSpec
    from harness.tasks.refs import TaskRef

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


def task_prompts(ref: TaskRef, spec: TaskSpec, cfg: RunConfig, model: LM) -> int | None:
    """The prompts the run sends for one task (templates × conditions × items), counted from
    its plan as the runner counts them, without generating items; None when the task's items
    cannot be read (the task's own run reports why)."""
    from harness.run.plan import plan_task

    try:
        return plan_task(ref, spec, cfg, model).prompts()
    except Exception:
        return None


def duration(seconds: float) -> str:
    """``42 s``, ``2 min 10 s``, ``1 h 05 min``."""
    s = max(0, round(seconds))
    if s < 60:
        return f"{s} s"
    if s < 3600:
        return f"{s // 60} min {s % 60:02d} s"
    return f"{s // 3600} h {s % 3600 // 60:02d} min"


PREFILL_WEIGHT = 8  # a prompt's own forward pass, in generated-token units (for the estimate)


def prompt_weight(spec: TaskSpec) -> int:
    """How much model work one prompt of the task costs, for the estimate of the time left: the
    tokens it may generate, plus its own forward pass (a task that writes 115 tokens per
    prompt costs many times one that writes 4)."""
    from harness.outputs import output_type

    return output_type(spec).new_tokens(spec) + PREFILL_WEIGHT


@dataclass
class RunClock:
    """A run's planned prompts per task and how long the finished ones took.

    The time left is the time so far scaled by the work left over the work done, where a
    task's work is its prompts times ``prompt_weight``.
    """

    planned: dict[str, int | None]  # task address -> prompts (None: not countable in advance)
    weights: dict[str, int] = field(default_factory=dict)  # task address -> work per prompt
    started: float = field(default_factory=lambda: time.perf_counter())  # model calls begin
    done_tasks: int = 0  # tasks finished (or failed)
    done_prompts: int = 0  # their prompts
    done_work: int = 0  # their work (prompts x weight)

    @classmethod
    def plan(cls, specs: Sequence[tuple[TaskRef, TaskSpec]], cfg: RunConfig,
             model: LM) -> RunClock:
        """Count every task's prompts; the clock starts now."""
        return cls({ref.address: task_prompts(ref, spec, cfg, model) for ref, spec in specs},
                   {ref.address: prompt_weight(spec) for ref, spec in specs})

    @property
    def total(self) -> int:
        """Prompts of the tasks that could be counted."""
        return sum(n for n in self.planned.values() if n is not None)

    def _work(self, address: str) -> int:
        return (self.planned.get(address) or 0) * self.weights.get(address, 1)

    def announce(self) -> str:
        """The line printed before the first model call."""
        n = len(self.planned)
        uncounted = sum(v is None for v in self.planned.values())
        tasks = f"{n} task{'s' if n != 1 else ''}"
        # task_prompts gives None only where making the task's items failed: its run fails too
        why = ("making its items failed; its error follows" if uncounted == 1 else
               "making their items failed; each one's error follows")
        if uncounted == n:
            return f"{tasks}, prompts not countable in advance ({why})"
        more = f" (and {uncounted} not countable in advance: {why})" if uncounted else ""
        return f"{self.total:,} prompts in {tasks}{more}"

    def task_failed(self, address: str) -> None:
        """Record a task that raised: its prompts leave the plan."""
        self.done_tasks += 1
        self.planned[address] = 0

    def task_done(self, address: str) -> str:
        """Record a finished task; the line with the time left."""
        self.done_tasks += 1
        self.done_prompts += self.planned.get(address) or 0
        self.done_work += self._work(address)
        elapsed = time.perf_counter() - self.started
        head = (f"[{self.done_tasks}/{len(self.planned)} tasks, {self.done_prompts:,}/"
                f"{self.total:,} prompts, {duration(elapsed)}]")
        work_left = sum(self._work(a) for a in self.planned) - self.done_work
        if self.done_tasks == len(self.planned) or work_left <= 0:
            return f"{head} model calls done"
        if not self.done_work:
            return f"{head} time left not known yet"
        return f"{head} about {duration(elapsed / self.done_work * work_left)} left (estimated)"
