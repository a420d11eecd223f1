"""Easy-to-hard analyses: Supervision Gap Recovered, critical complexity, 1PL ability.

- ``sgr`` (Hase et al. 2024, "The Unreasonable Effectiveness of Easy Training Data for Hard
  Tasks"): the hard items are run under three few-shot conditions (exemplars from the easy pool,
  from the hard pool, none) and ``SGR = (acc_easy − acc_none) / (acc_hard − acc_none)``: the share
  of the gain from hard supervision that easy supervision recovers (1.0: easy is as good as hard).
  The 95% CI is a paired percentile bootstrap over items (the same items under all three
  conditions); a resample with a zero denominator is ±inf (0/0 is dropped, and with more than half
  dropped the CI is undefined), so a bound it reaches is unbounded: None, named in
  ``details.ci_unbounded``. Undefined (None) when ``acc_hard <= acc_none``. When every resample
  gives the same SGR (the data sit at a boundary) no interval is given (``details.ci`` says so):
  a point is not an interval.
- ``critical_complexity`` (Qi et al. 2024, Scylla): per complexity level (the ``level_field`` of
  each sample's ``meta``) the gap ``acc(ID variant) − acc(OOD variant)`` with Newcombe's interval
  (as the ID−OOD gap: ``harness.scoring.intervals``); the value is the level where the gap
  peaks, ``c* = argmax_c gap(c)`` (ties: the lowest level).
  ``argmax_share`` in the details says how often each level is the argmax over the resamples.
- ``ability_1pl`` (Easy2Hard-Bench, Ding et al. 2024): the model's ability θ from a 1-parameter
  logistic fit of per-item correctness on item difficulty d, ``P(correct) = σ(scale · (θ − d))``
  (``scale`` = the logistic slope per difficulty unit; Elo/Glicko ratings: ln(10)/400), so θ is
  on the difficulty's own scale: the difficulty the model solves half the time. Maximum
  likelihood; 95% Wald CI ``θ ± 1.96 / (scale · √I)`` with Fisher information ``I = Σ p(1 − p)``.
  ``difficulty_field`` (a ``fields.meta`` name) fits on another rating than the bucketed one.
  Undefined when every item is right (or every item wrong).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from pydantic import Field, StrictInt

from harness.analyses.registry import AnalysisParams, AnalysisResult, analysis
from harness.scoring.intervals import diff_interval, proportion
from harness.scoring.records import SampleRecord
from harness.scoring.stats import (
    Z95,
    r10,
    ratio_ci,
    resampled_means,
    resampled_sums,
)
from harness.spec.buckets import Bucket, format_value

Floats = npt.NDArray[np.float64]


def _opt(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else r10(x)


# --- Supervision Gap Recovered ----------------------------------------------------------------


def sgr_value(easy: float, hard: float, none: float) -> float | None:
    """``(easy − none) / (hard − none)``; None when hard <= none (no gap to recover, issue 17)."""
    return None if hard <= none else (easy - none) / (hard - none)


class SgrParams(AnalysisParams):
    """Parameters of ``sgr``: the few-shot condition ids of the three conditions."""

    easy: str = Field("easy", description="condition id of easy-pool exemplars")
    hard: str = Field("hard", description="condition id of hard-pool exemplars")
    none: str = Field("none", description="condition id of zero-shot")
    resamples: StrictInt = Field(1000, ge=1, description="paired bootstrap resamples")


@analysis("sgr", SgrParams, title="SGR", headline=2)
def sgr(samples: Sequence[SampleRecord], buckets: Sequence[Bucket], params: dict[str, Any],
        seed: int) -> AnalysisResult:
    """Supervision Gap Recovered over the items run under all three conditions (see module)."""
    p = SgrParams.model_validate(params)
    names = {"easy": p.easy, "hard": p.hard, "none": p.none}
    resamples = p.resamples
    by_item: dict[tuple[str, str], dict[str, float]] = {}
    for s in samples:
        if s.condition in names.values():
            by_item.setdefault((s.template, s.id), {})[s.condition] = s.score
    keys = sorted(k for k, v in by_item.items() if len(v) == 3)
    conds = [c for c in names.values() if not any(s.condition == c for s in samples)]
    if conds:
        raise ValueError(f"no sample has condition {conds[0]!r} (fewshot.conditions ids: "
                         f"params easy/hard/none name them)")
    if not keys:
        return AnalysisResult(name="sgr", value=None, n=0, details={"reason": "no shared items"})
    cols = {c: np.array([by_item[k][names[c]] for k in keys], dtype=np.float64) for c in names}
    acc = {c: float(cols[c].mean()) for c in names}
    value = sgr_value(acc["easy"], acc["hard"], acc["none"])
    e, h, z = (s / len(keys) for s in resampled_sums(
        np.random.default_rng(seed), [cols[c] for c in ("easy", "hard", "none")], resamples))
    lo, hi, valid = ratio_ci(e - z, h - z)
    ci = (_opt(lo), _opt(hi)) if value is not None else (None, None)
    if ci[0] is not None and ci[0] == ci[1]:  # every resample the same: the data sit at a
        ci = (None, None)                     # boundary, and a point is no interval
    unbounded = [side for side, x in (("low", lo), ("high", hi)) if math.isinf(x)]
    details: dict[str, Any] = {
        "accuracy": {names[c]: r10(acc[c]) for c in names},
        "gap_hard_minus_none": r10(acc["hard"] - acc["none"]),
        "gap_easy_minus_none": r10(acc["easy"] - acc["none"]),
        "valid_resamples": valid, "resamples": resamples,
        "templates": sorted({k[0] for k in keys}),
    }
    if value is None:
        details["reason"] = "hard supervision is not better than none: no gap to recover"
    elif ci[0] is None and value is not None:
        details["ci"] = "none: every resample gives the same SGR (the data sit at a boundary)"
    elif unbounded:
        details["ci_unbounded"] = unbounded  # resamples with hard = none reach these bounds
    return AnalysisResult(name="sgr", value=_opt(value), ci_low=ci[0], ci_high=ci[1],
                          n=len(keys), details=details)


# --- critical complexity ----------------------------------------------------------------------


class CriticalComplexityParams(AnalysisParams):
    """Parameters of ``critical_complexity``."""

    level_field: str = Field("level", description="meta field holding the complexity level")
    resamples: StrictInt = Field(1000, ge=1, description="bootstrap resamples per level")


@analysis("critical_complexity", CriticalComplexityParams, better="low")
def critical_complexity(samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
                        params: dict[str, Any], seed: int) -> AnalysisResult:
    """The complexity level with the largest ID−OOD gap, with per-level gaps and CIs."""
    p = CriticalComplexityParams.model_validate(params)
    field, resamples = p.level_field, p.resamples
    scores: dict[float, dict[str, list[float]]] = {}
    for s in samples:
        if field not in s.meta:
            raise ValueError(f"sample {s.id} has no meta field {field!r} (list it in fields.meta)")
        level = float(s.meta[field])
        scores.setdefault(level, {"ID": [], "OOD": []})[s.role].append(s.score)
    levels = sorted(lv for lv, r in scores.items() if r["ID"] and r["OOD"])
    if not levels:
        return AnalysisResult(name="critical_complexity", value=None, n=0,
                              details={"reason": "no level has both ID and OOD samples"})
    rng = np.random.default_rng(seed)
    rows, boot = [], []
    for lv in levels:
        a, b = (np.asarray(scores[lv][r], dtype=np.float64) for r in ("ID", "OOD"))
        ma, mb = resampled_means(rng, a, resamples), resampled_means(rng, b, resamples)
        boot.append(ma - mb)  # only for argmax_share; the gap's own interval is Newcombe's
        lo, hi = (r10(x) for x in diff_interval(proportion(a.tolist()), proportion(b.tolist())))
        rows.append({"level": lv, "n_id": int(a.size), "n_ood": int(b.size),
                     "acc_id": r10(float(a.mean())), "acc_ood": r10(float(b.mean())),
                     "gap": r10(float(a.mean() - b.mean())), "ci_low": lo, "ci_high": hi})
    gaps = [float(r["gap"]) for r in rows]
    best = levels[int(np.argmax(gaps))]  # argmax takes the first (lowest) level on ties
    winners = np.argmax(np.vstack(boot), axis=0)
    share = {format_value(lv): r10(float(np.mean(winners == i))) for i, lv in enumerate(levels)}
    n = sum(len(scores[lv]["ID"]) + len(scores[lv]["OOD"]) for lv in levels)
    return AnalysisResult(name="critical_complexity", value=best, n=n,
                          details={"levels": rows, "argmax_share": share})


# --- 1PL ability ------------------------------------------------------------------------------


def _sigmoid(x: Floats) -> Floats:
    out: Floats = 1.0 / (1.0 + np.exp(-x))
    return out


def fit_1pl(y: Sequence[float], b: Sequence[float]) -> tuple[float, float] | None:
    """Maximum-likelihood θ of ``P(y=1) = σ(θ − b)`` and its standard error; None when every
    ``y`` is 1 (or 0), where the likelihood has no maximum. ``y`` may be fractional (0..1)."""
    ys, bs = np.asarray(y, dtype=np.float64), np.asarray(b, dtype=np.float64)
    total = float(ys.sum())
    if ys.size == 0 or total <= 0.0 or total >= ys.size:
        return None
    lo, hi = float(bs.min()) - 60.0, float(bs.max()) + 60.0
    for _ in range(200):  # the score equation Σ σ(θ − b) = Σ y is monotone in θ: bisect
        mid = (lo + hi) / 2
        if float(_sigmoid(mid - bs).sum()) < total:
            lo = mid
        else:
            hi = mid
    theta = (lo + hi) / 2
    p = _sigmoid(theta - bs)
    info = float((p * (1 - p)).sum())
    return theta, 1.0 / math.sqrt(info)


class Ability1plParams(AnalysisParams):
    """Parameters of ``ability_1pl``."""

    scale: float = Field(1.0, gt=0, description="logistic slope per difficulty unit")
    difficulty_field: str | None = Field(
        None, description="meta field to fit on instead of the bucketed difficulty")


@analysis("ability_1pl", Ability1plParams)
def ability_1pl(samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
                params: dict[str, Any], seed: int) -> AnalysisResult:
    """Ability θ of the model from a 1PL fit on item difficulty (see module)."""
    p = Ability1plParams.model_validate(params)
    scale, field = p.scale, p.difficulty_field
    b, y = [], []
    for s in samples:
        raw = s.difficulty if field is None else s.meta.get(field)
        if raw is None:
            raise ValueError(f"sample {s.id} has no meta field {field!r} (list it in fields.meta)")
        b.append(float(raw))
        y.append(s.score)
    center = math.fsum(b) / len(b) if b else 0.0  # for conditioning only; θ is shift-equivariant
    fit = fit_1pl(y, [scale * (d - center) for d in b])
    per_bucket: dict[str, list[float]] = {}
    for s in samples:
        per_bucket.setdefault(s.bucket, []).append(s.score)
    details: dict[str, Any] = {
        "n_correct": r10(math.fsum(y)), "scale": scale,
        "bucket_accuracy": {k: r10(math.fsum(v) / len(v)) for k, v in per_bucket.items()},
    }
    if fit is None:
        details["reason"] = "every item right or every item wrong: θ is unbounded"
        return AnalysisResult(name="ability_1pl", value=None, n=len(y), details=details)
    theta, se = center + fit[0] / scale, fit[1] / scale
    details["se"] = r10(se)
    return AnalysisResult(name="ability_1pl", value=r10(theta), ci_low=r10(theta - Z95 * se),
                          ci_high=r10(theta + Z95 * se), n=len(y), details=details)
