"""The cells of a task row in leaderboard.json: buckets, metric tables, splits, d50 searches,
analyses and registered gaps (re-exported by ``board_file``, where the rest of the schema is)."""

from __future__ import annotations

from pydantic import Field

from harness.leaderboard.board_base import _Model


class BucketInfo(_Model):
    """One bucket of a task's difficulty axis."""

    label: str  # bucket label, e.g. "7" or "6-10"
    index: int  # position on the difficulty axis
    role: str  # "ID" or "OOD"
    lo: float  # smallest difficulty value
    hi: float  # largest (per-value) or exclusive upper edge (ranges)


class BucketCell(_Model):
    """Accuracy of one entry in one bucket."""

    label: str  # bucket label
    n: int  # scored samples
    accuracy: float | None  # accuracy; None when the bucket is empty
    ci_low: float | None  # Wilson 95% lower bound
    ci_high: float | None  # Wilson 95% upper bound
    baseline: float | None = None  # best constant answer's score on the bucket's items
    floor: bool | None = None  # the accuracy is not above that baseline
    constant: bool = False  # one answer makes up most of the model's answers here
    cut: float | None = Field(None, exclude_if=lambda v: v is None)  # share stopped on budget
    budget_bound: bool = Field(False, exclude_if=lambda v: not v)  # lost ones: answers/budget
    context_bound: bool = Field(False, exclude_if=lambda v: not v)  # lost to the context instead
    looped: float | None = Field(None, exclude_if=lambda v: not v)  # share cut inside a loop


class MetricCells(_Model):
    """Another metric of a task's ``scoring.metrics`` for one entry (primary report)."""

    buckets: list[BucketCell]  # per-bucket score, in bucket order (no baselines: the primary's)
    roles: list[BucketCell]  # pooled ID then OOD (label: the role)


class Split(_Model):
    """An estimate with its 95% interval (the difficulty + shift split, the edge gap)."""

    value: float  # the estimate (accuracy points as a fraction)
    ci_low: float  # 95% lower bound
    ci_high: float  # 95% upper bound


class HorizonCell(_Model):
    """d50 of one entry on one task, from the adaptive horizon search (``--horizon``)."""

    status: str  # measured, above ("≥ max"), below ("≤ min"), floor or misfit (no single fall)
    d50: float | None  # where accuracy falls halfway from the ID level to the item baseline
    ci_low: float | None  # 95% credible limits (measured only) ...
    ci_high: float | None  # ... None: the interval runs past the range
    factor: float | None  # d50 / the largest ID difficulty
    edge: float  # the largest ID difficulty
    range_lo: int = 1  # the smallest difficulty the search could try
    range_hi: int  # the largest difficulty the search could try
    range_end: str  # what set range_hi: spec, context or generator (older runs: output)
    top: float  # fitted easy-item accuracy
    spread: float  # the fall's width in ln-difficulty units (to draw the fitted curve)
    baseline: float  # the item baseline
    items: int  # search answers
    fixed_crossing: float | None  # where the fixed buckets' curve crosses the same midpoint
    overdispersion: float = 0.0  # fitted intra-class correlation of a batch (posterior mean)
    shapes: list[float] = []  # posterior weight of each fall shape (normal, late, early)
    fit_p: float | None = None  # the check round's p-value (misfit below 0.01)
    accuracies: list[tuple[float, float, int]] = []  # (difficulty, accuracy, answered) tried
    lost: float = Field(0.0, exclude_if=lambda v: not v)  # answers lost to the budget (share)
    context_lost: float = Field(0.0, exclude_if=lambda v: not v)  # ... to the model's context


class AnalysisCell(_Model):
    """A task-level analysis of one entry (compositionality gap, SGR, CPS, effective length, …)."""

    name: str  # analysis name
    value: float | None  # headline value
    ci_low: float | None  # lower 95% bound, where defined
    ci_high: float | None  # upper 95% bound, where defined
    n: int  # items the value rests on


class GapCell(_Model):
    """One registered gap beyond the built-in three (results.json ``gaps.extra``) on one task."""

    value: float | None  # its ``value``
    ci_low: float | None  # its ``ci_low``, where it has one
    ci_high: float | None  # its ``ci_high``, where it has one
