"""Length-generalization analyses: RULER-style effective length.

``effective_length`` (Hsieh et al. 2024, RULER): the largest tested length up to which accuracy
*stays* above a threshold — walking the buckets from the shortest, the top of the last bucket
of the leading run whose accuracy exceeds ``threshold`` (strictly, as "exceeds" in the paper);
an empty bucket ends the run. RULER's threshold is 0.856, Llama-2-7B's score at 4K. ``None``
when the shortest length already fails. Details add, per template and per needle depth (the
``depth_field`` of each sample's ``meta``), the per-length accuracies and effective lengths,
plus ``largest_passing``: the longest length above the threshold whether or not the shorter
ones all are. Every per-length row (per depth: each length × depth cell) carries its n and a
Wilson 95% interval; ``untested`` lists lengths with no item (an effective length that stops
before one is a lower bound, not a measured limit). Tasks cross depth with length through
``source.grid``, so the cells are balanced.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import Field

from harness.analyses.registry import AnalysisParams, AnalysisResult, analysis
from harness.scoring.aggregates import leading_run_end
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10, wilson_interval
from harness.spec.buckets import Bucket, format_value

RULER_THRESHOLD = 0.856  # Llama-2-7B at 4K tokens (Hsieh et al. 2024)


def per_length(samples: Sequence[SampleRecord], buckets: Sequence[Bucket]) -> list[dict[str, Any]]:
    """For every bucket in order: its label, length (``top``), n, accuracy and its Wilson 95%
    interval (None if empty)."""
    scores: dict[int, list[float]] = {b.index: [] for b in buckets}
    for s in samples:
        if s.bucket_index not in scores:
            raise ValueError(f"sample {s.id}: bucket index {s.bucket_index} is not a task bucket")
        scores[s.bucket_index].append(s.score)
    rows = []
    for b in sorted(buckets, key=lambda b: b.index):
        xs = scores[b.index]
        acc = r10(math.fsum(xs) / len(xs)) if xs else None
        lo, hi = wilson_interval(math.fsum(xs), len(xs)) if xs else (None, None)
        rows.append({"bucket": b.label, "length": b.top, "n": len(xs), "accuracy": acc,
                     "ci_low": None if lo is None else r10(lo),
                     "ci_high": None if hi is None else r10(hi)})
    return rows


def effective_length(rows: Sequence[dict[str, Any]], threshold: float) -> float | None:
    """Top of the last bucket of the leading run with accuracy > ``threshold`` (see module)."""
    run = leading_run_end(rows, lambda r: r["accuracy"] is not None and r["accuracy"] > threshold)
    return None if run is None else run["length"]


def largest_passing(rows: Sequence[dict[str, Any]], threshold: float) -> float | None:
    """The longest length whose accuracy exceeds ``threshold``, shorter ones regardless."""
    passing = [r["length"] for r in rows if r["accuracy"] is not None and r["accuracy"] > threshold]
    return max(passing) if passing else None


def _summary(samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
             threshold: float) -> dict[str, Any]:
    rows = per_length(samples, buckets)
    return {"effective_length": effective_length(rows, threshold),
            "largest_passing": largest_passing(rows, threshold), "n": len(samples),
            "untested": [r["length"] for r in rows if r["n"] == 0], "per_length": rows}


def _depth_key(value: Any) -> str:
    return format_value(value) if isinstance(value, (int, float)) else str(value)


class EffectiveLengthParams(AnalysisParams):
    """Parameters of ``effective_length``."""

    threshold: float = Field(RULER_THRESHOLD, ge=0.0, lt=1.0,
                             description="accuracy a length must exceed (RULER: 0.856)")
    depth_field: str = Field("depth", description="meta field holding the needle depth")
    window: int | float | None = Field(None, gt=0, description="declared training window")
    template: str | None = Field(None, description="headline template (default: the first)")


@analysis("effective_length", EffectiveLengthParams, title="effective length", headline=4)
def effective_length_analysis(
    samples: Sequence[SampleRecord], buckets: Sequence[Bucket], params: dict[str, Any], seed: int
) -> AnalysisResult:
    """RULER effective length of the headline template (``template`` param, default: the first
    template in the samples) under its first few-shot condition; params ``threshold``
    (default 0.856), ``depth_field`` (default ``"depth"``) and ``window`` (declared training
    window: the effective length is also given as a multiple of it)."""
    p = EffectiveLengthParams.model_validate(params)
    threshold, depth_field, window = p.threshold, p.depth_field, p.window
    templates = list(dict.fromkeys(s.template for s in samples))
    template = p.template if p.template is not None else (templates[0] if templates else "")
    if template not in templates:
        raise ValueError(f"template {template!r} not among the samples' templates {templates}")
    condition = next(s.condition for s in samples if s.template == template)
    by_template = {
        t: _summary([s for s in samples if s.template == t and s.condition == condition],
                    buckets, threshold)
        for t in templates
    }
    head = [s for s in samples if s.template == template and s.condition == condition]
    depths: dict[str, list[SampleRecord]] = {}
    for s in head:
        if depth_field in s.meta:
            depths.setdefault(_depth_key(s.meta[depth_field]), []).append(s)
    by_depth = {d: _summary(depths[d], buckets, threshold)
                for d in sorted(depths, key=lambda k: (_sort_num(k), k))}
    value = by_template[template]["effective_length"]
    details: dict[str, Any] = {
        "threshold": threshold, "template": template, "condition": condition,
        "rule": "largest length L such that every bucket up to L has accuracy > threshold",
        "largest_passing": by_template[template]["largest_passing"],
        "per_length": by_template[template]["per_length"],
        "by_depth": by_depth, "by_template": by_template,
    }
    if window is not None:
        details["window"] = window
        details["window_multiple"] = None if value is None else r10(value / window)
    return AnalysisResult(name="effective_length", value=value, n=len(head), details=details)


def _sort_num(key: str) -> float:
    try:
        return float(key)
    except ValueError:
        return math.inf
