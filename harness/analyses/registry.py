"""Registry of task-level analyses: ``@analysis("name")`` functions over all samples of a task.

An analysis gets every sample record of one task (all templates and few-shot conditions), the
task's ordered buckets, its parameters from the task file (``analyses: [{name, params}]``) and a
seed of its own; it returns an ``AnalysisResult``. Like everything in results.json, it must be
recomputable from the samples file alone: use only the records (their ``meta`` holds any linking
fields the task declared under ``fields.meta``).

An analysis also says how a leaderboard shows it (``Analysis``: a title, whether it is a headline
column and where, whether lower is better, how its value is aggregated over tasks); the
leaderboard reads these from here (``board_info``) rather than keeping lists of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from harness import plugins
from harness.board_info import BoardInfo
from harness.errors import HarnessError
from harness.registry import Registry
from harness.scoring.records import SampleRecord
from harness.seeding import derive_seed
from harness.spec.buckets import Bucket
from harness.spec.scoring import AnalysisSpec


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


class AnalysisParams(BaseModel):
    """Base of an analysis's parameter model: frozen, unknown keys are errors."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True)
class Analysis(BoardInfo):
    """A registered analysis: its function and, when it declares one, its parameter model
    (checked when the task file loads, so a bad parameter never waits for the model run), and
    how a leaderboard shows it (``BoardInfo``: title, headline, better, board)."""

    name: str  # the name task files use (analyses[].name)
    fn: AnalysisFn  # (samples, buckets, params, seed) -> AnalysisResult
    params: type[AnalysisParams] | None = None  # parameter model; None: params unchecked

    def __call__(self, samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
                 params: dict[str, Any], seed: int) -> AnalysisResult:
        problems = self.check_params(params)
        if problems:  # one line per call, as at task load (the model's messages are multi-line)
            raise ValueError("; ".join(f"params.{p}" for p in problems))
        return self.fn(samples, buckets, params, seed)

    def check_params(self, params: dict[str, Any]) -> list[str]:
        """Problems with ``params`` as ``key: message`` lines (empty when valid)."""
        if self.params is None:
            return []
        try:
            self.params.model_validate(params)
        except ValidationError as e:
            return [f"{'.'.join(str(x) for x in err['loc']) or '(params)'}: {err['msg']}"
                    for err in e.errors()]
        return []


def _from_object(name: str, obj: object) -> Analysis:
    if isinstance(obj, Analysis):
        return obj
    return Analysis(name, obj)  # type: ignore[arg-type]


# the built-ins: every module of this package, each registering its analyses with @analysis
ANALYSES: Registry[Analysis] = Registry(
    "analysis", plugins.ANALYSES, package="harness.analyses", from_object=_from_object,
    plural="analyses",
)

# ``@analysis(name, params=None, *, title=None, headline=None, better="high", board="mean")``:
# register ``fn(samples, buckets, params, seed) -> AnalysisResult`` under ``name``; ``params``:
# its parameter model (an ``AnalysisParams`` subclass), checked at task load; the rest: how a
# leaderboard shows it (see ``Analysis``). The decorated name is the ``Analysis``.
analysis = ANALYSES.item_decorator(Analysis)


def board_info(name: str) -> Analysis:
    """How a leaderboard shows analysis ``name``: a built-in's metadata, else the defaults
    (titled by its name, no headline column, higher is better, mean). Plugin metadata is not
    read, so a board does not depend on what is installed or loaded where it is built."""
    ANALYSES.load_builtins()
    return ANALYSES.items[name] if ANALYSES.is_builtin(name) else Analysis(name, _no_fn)


def _no_fn(samples: Sequence[SampleRecord], buckets: Sequence[Bucket], params: dict[str, Any],
           seed: int) -> AnalysisResult:
    raise ValueError("an analysis known only from a results file cannot be run")


def get_analysis(name: str) -> Analysis:
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
