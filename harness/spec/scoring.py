"""The task file's scoring keys: how the answer is taken from the output (``scoring.extract``),
the per-sample metric (``scoring.metric``, or several: ``scoring.metrics``), the gaps reported
(``gaps:``) and the task-level analyses (``analyses:``); each names a registered block
(``harness extractors|metrics|gaps|analyses list``) and its parameters."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from harness.spec.base import FrozenSpec as _Spec


class ExtractSpec(_Spec):
    """How the answer is taken from raw generated text."""

    kind: str = Field(
        "strip",
        description="registered extractor: strip (whitespace), first_line, regex (`pattern`), "
                    "last_number, boxed (the last \\boxed{}), first_boxed (the first, settled once "
                    "closed); see `harness extractors list`"
    )
    pattern: str | None = Field(
        None, description="regex for kind=regex (first group, else whole match)"
    )


class ScoringSpec(_Spec):
    """Answer extraction and the per-sample metric, or several (`metrics`; see "Several
    metrics" in docs/task-files.md): the first of `metrics` is the primary one, and `metric`
    is set to it (given too, it must be that first name)."""

    extract: ExtractSpec = Field(ExtractSpec(), description="how to get the answer from the output")
    metric: str = Field(
        "exact_match",
        description="registered metric (exact_match, numeric_match, …; see `harness metrics list`)",
    )
    metrics: list[str] = Field(
        default_factory=list, exclude_if=lambda v: not v,
        description="several registered metrics, all reported; the first is the primary one "
        "(gaps, baselines, the board); generate tasks only",
    )

    @model_validator(mode="before")
    @classmethod
    def _primary(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("metrics"), list) and data["metrics"]:
            first = data["metrics"][0]
            if "metric" not in data:
                return {**data, "metric": first}
            if data["metric"] != first:
                raise ValueError(
                    f"metric {data['metric']!r} and metrics {data['metrics']!r}: the first of "
                    "metrics is the primary metric; give metrics alone (or metric as its first)")
        return data

    @model_validator(mode="after")
    def _distinct(self) -> ScoringSpec:
        if "metrics" in self.model_fields_set and not self.metrics:
            raise ValueError("metrics: give at least one metric (or leave the key out)")
        dup = sorted({m for m in self.metrics if self.metrics.count(m) > 1})
        if dup:
            raise ValueError(f"metrics: {', '.join(map(repr, dup))} given twice")
        return self

    def metric_keys(self) -> list[tuple[str, str]]:
        """Each metric with the task-file key that names it (``scoring.metrics.1``, …)."""
        if not self.metrics:
            return [("scoring.metric", self.metric)]
        return [(f"scoring.metrics.{i}", name) for i, name in enumerate(self.metrics)]

    @property
    def extra_metrics(self) -> list[str]:
        """The metrics reported besides the primary one (``metrics`` after its first)."""
        return self.metrics[1:]


class GapsSpec(_Spec):
    """Which generalization gaps to report, and their parameters."""

    report: list[str] = Field(
        ["id_ood", "retention", "horizon"],
        description="registered gaps to compute (id_ood, retention, horizon, …; see `harness gaps "
        "list`)",
    )
    horizon_threshold: float = Field(
        0.5, gt=0, le=1, description="horizon: fraction of ID accuracy to keep"
    )
    bootstrap: int = Field(1000, ge=100, description="bootstrap resamples a plugin gap may draw "
                           "(the built-in gaps use score intervals)")
    edge: bool = Field(
        True, exclude_if=lambda v: v,
        description="whether the last ID bucket and the first OOD bucket meet at one edge of a "
        "single difficulty scale; false where each OOD bucket is the shifted variant of an ID "
        "level (the complexity ladders): no edge gap is reported",
    )
    baseline: float | None = Field(
        None, ge=0, le=1, exclude_if=lambda v: v is None,
        description="the score every bucket is judged against, where the best constant answer "
        "(the default, computed from the items) is not the right floor; needs baseline_reason",
    )
    baseline_reason: str | None = Field(
        None, min_length=1, exclude_if=lambda v: v is None,
        description="why the declared baseline replaces the best constant answer",
    )

    @model_validator(mode="after")
    def _baseline_has_reason(self) -> GapsSpec:
        if (self.baseline is None) != (self.baseline_reason is None):
            raise ValueError("baseline and baseline_reason go together: a declared baseline "
                             "says why the best constant answer is not the floor")
        return self


class AnalysisSpec(_Spec):
    """A registered task-level analysis (compositionality gap, SGR, CPS, …) and its parameters."""

    name: str = Field(description="registered analysis (see `harness analyses list`)")
    params: dict[str, Any] = Field({}, description="keyword parameters of the analysis")
