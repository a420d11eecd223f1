"""Registry of task-level analyses: ``@analysis("name")`` functions over all samples of a task.

An analysis gets every sample record of one task (all templates and few-shot conditions), the
task's ordered buckets, its parameters from the task file (``analyses: [{name, params}]``) and a
seed of its own; it returns an ``AnalysisResult``. Like everything in results.json, it must be
recomputable from the samples file alone: use only the records (their ``meta`` holds any linking
fields the task declared under ``fields.meta``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from harness.errors import HarnessError
from harness.registry import Registry
from harness.scoring.records import SampleRecord
from harness.seeding import derive_seed
from harness.tasks.buckets import Bucket
from harness.tasks.spec import AnalysisSpec


class AnalysisResult(BaseModel):
    """The outcome of one analysis."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str  # analysis name, e.g. "compositionality_gap"
    value: float | None  # the headline number (None when undefined, e.g. no eligible items)
    ci_low: float | None = None  # lower end of its 95% interval, where one is defined
    ci_high: float | None = None  # upper end of its 95% interval
    n: int  # number of items (or item pairs) the value rests on
    details: dict[str, Any] = {}  # per-template / per-level / per-condition breakdowns


AnalysisFn = Callable[
    [Sequence[SampleRecord], Sequence[Bucket], dict[str, Any], int], AnalysisResult]

# modules that register built-in analyses when imported (suites add theirs here)
_BUILTIN_MODULES: tuple[str, ...] = ("harness.analyses.lengthgen", "harness.analyses.easy2hard",
                                     "harness.analyses.compositionality",
                                     "harness.analyses.multiprompt")

ANALYSES: Registry[AnalysisFn] = Registry(
    "analysis", "harness.analyses", _BUILTIN_MODULES,
    from_object=lambda name, fn: fn,  # type: ignore[arg-type,return-value]
    plural="analyses",
)


def analysis(name: str) -> Callable[[AnalysisFn], AnalysisFn]:
    """Register ``fn(samples, buckets, params, seed) -> AnalysisResult`` under ``name``."""

    def deco(fn: AnalysisFn) -> AnalysisFn:
        ANALYSES.add(name, fn)
        return fn

    return deco


def get_analysis(name: str) -> AnalysisFn:
    """Look up an analysis: built-ins first, then the ``harness.analyses`` entry points."""
    return ANALYSES.get(name)


def analysis_names() -> list[str]:
    """Names of the built-in analyses."""
    ANALYSES.load_builtins()
    return sorted(ANALYSES.items)


def run_analyses(samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
                 specs: Sequence[AnalysisSpec], seed: int) -> list[AnalysisResult]:
    """Run every analysis a task asks for; each gets its own seed,
    ``derive_seed(seed, task, "analysis", name)``."""
    if not specs or not samples:
        return []
    task = samples[0].task
    out = []
    for spec in specs:
        fn = get_analysis(spec.name)
        try:
            out.append(fn(samples, buckets, dict(spec.params),
                          derive_seed(seed, task, "analysis", spec.name)))
        except (TypeError, ValueError, KeyError) as e:
            raise HarnessError(f"{task}: analysis {spec.name!r}: {e}") from None
    return out
