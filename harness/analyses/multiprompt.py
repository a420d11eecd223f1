"""Multi-prompt evaluation (Mizrahi et al. 2024, "State of What Art? A Call for Multi-Prompt LLM
Evaluation"): how a model's accuracy depends on the instruction template.

Over a set of templates with accuracies ``a_t``:

- ``MaxP = max_t a_t`` (best template), ``AvgP = mean_t a_t`` (expected over templates);
- ``CPS = (1 − (MaxP − AvgP)) · MaxP`` (combined performance score: the best accuracy discounted
  by how far the average falls short of it);
- ``spread = max − min`` and ``worst = min_t a_t``.

``prompt_scores`` computes these from any table of per-template accuracies (for instance the
paper's per-paraphrase accuracy files, read with ``read_accuracy_table``); import them from
``harness.analyses.multiprompt``. The ``multi_prompt`` analysis computes them from a task's
samples (accuracy per template over every item), with a bootstrap CI for CPS (items resampled,
every template keeping its items; where every resample gives the same CPS, as with all templates
at 0% or 100%, the interval is the bound CPS must lie in from the templates' exact intervals,
never a point) and the seen-vs-unseen template gap ``AvgP(seen) − AvgP(unseen)`` with the
paired MOVER interval over items of ``harness.scoring.intervals``.

Parameters of the analysis: ``seen`` (ids of the seen templates; filled in from the templates'
``seen`` flags when a task file is loaded), ``role`` (``all``, ``ID`` or ``OOD``: which items
count), ``bootstrap`` (resamples, default 1000).
"""

from __future__ import annotations

import csv
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from pydantic import Field, StrictInt

from harness.analyses.registry import AnalysisParams, AnalysisResult, analysis
from harness.errors import HarnessError
from harness.scoring.intervals import clustered_proportion, paired_diff_interval, proportion
from harness.scoring.records import SampleRecord
from harness.scoring.stats import percentile_ci, r10, resample_rows
from harness.spec.buckets import Bucket

LEVEL = 0.95


@dataclass(frozen=True)
class PromptScores:
    """Aggregates of per-template accuracies."""

    max_p: float  # best template accuracy (MaxP)
    avg_p: float  # mean template accuracy (AvgP)
    cps: float  # (1 − (MaxP − AvgP)) · MaxP
    spread: float  # max − min
    worst: float  # min
    best_template: str  # a template reaching MaxP (first in sorted order)
    worst_template: str  # a template at the minimum (first in sorted order)
    n_templates: int  # number of templates


def prompt_scores(accuracies: Mapping[str, float]) -> PromptScores:
    """MaxP, AvgP, CPS, spread and worst case of ``{template: accuracy}`` (accuracies in
    [0, 1]; ``ValueError`` when empty or out of range)."""
    if not accuracies:
        raise ValueError("prompt_scores: no templates")
    bad = {k: v for k, v in accuracies.items() if not 0.0 <= v <= 1.0}
    if bad:
        raise ValueError(f"prompt_scores: accuracies outside [0, 1]: {bad}")
    names = sorted(accuracies)
    vals = [float(accuracies[n]) for n in names]
    hi, lo = max(vals), min(vals)
    avg = math.fsum(vals) / len(vals)
    return PromptScores(
        max_p=hi, avg_p=avg, cps=(1.0 - (hi - avg)) * hi, spread=hi - lo, worst=lo,
        best_template=names[vals.index(hi)], worst_template=names[vals.index(lo)],
        n_templates=len(vals),
    )


def read_accuracy_table(path: Path | str) -> dict[str, dict[str, float]]:
    """A per-template accuracy CSV (first column: template / paraphrase index; one column per
    model, a trailing ``_acc`` dropped from its name) as ``{model: {template: accuracy}}``.
    Empty cells are skipped."""
    p = Path(path)
    try:
        with p.open(encoding="utf-8", newline="") as f:
            rows = list(csv.reader(f))
    except OSError as e:
        raise HarnessError(f"{p}: cannot read accuracy table: {e.strerror or e}") from None
    if len(rows) < 2 or len(rows[0]) < 2:
        raise HarnessError(f"{p}: accuracy table needs a header and at least one row")
    models = [m[:-4] if m.endswith("_acc") else m for m in rows[0][1:]]
    out: dict[str, dict[str, float]] = {m: {} for m in models}
    for n, row in enumerate(rows[1:], 2):
        for m, cell in zip(models, row[1:], strict=False):  # short rows: missing cells
            if cell.strip():
                try:
                    out[m][row[0].strip()] = float(cell)
                except ValueError:
                    raise HarnessError(f"{p}:{n}: not a number: {cell!r}") from None
    return out


def _table(
    samples: Sequence[SampleRecord],
) -> tuple[list[str], list[tuple[str, str]], npt.NDArray[np.float64]]:
    """Templates, items (condition, id) and an items × templates score matrix (nan: missing)."""
    templates = sorted({s.template for s in samples})
    items = sorted({(s.condition, s.id) for s in samples})
    t_ix = {t: i for i, t in enumerate(templates)}
    i_ix = {k: i for i, k in enumerate(items)}
    mat = np.full((len(items), len(templates)), np.nan)
    for s in samples:
        mat[i_ix[(s.condition, s.id)], t_ix[s.template]] = s.score
    return templates, items, mat


def _col_means(mat: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    counts = np.sum(~np.isnan(mat), axis=0)
    sums = np.nansum(mat, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def _cps_of(acc: npt.NDArray[np.float64]) -> float:
    a = acc[~np.isnan(acc)]
    if a.size == 0:
        return math.nan
    hi = float(a.max())
    return (1.0 - (hi - float(a.mean()))) * hi


def _nanmean(x: npt.NDArray[np.float64], axis: int | None = None) -> Any:
    """``np.nanmean`` without the warning for all-missing slices (they give nan)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.nanmean(x, axis=axis)


def _ci(stat: npt.NDArray[np.float64]) -> tuple[float | None, float | None]:
    s = stat[~np.isnan(stat)]
    if s.size == 0:
        return None, None
    lo, hi = percentile_ci(s, LEVEL)
    return r10(lo), r10(hi)


def _seen_gap(mat: npt.NDArray[np.float64], templates: list[str], seen: set[str]
              ) -> dict[str, Any] | None:
    s_cols = [i for i, t in enumerate(templates) if t in seen]
    u_cols = [i for i, t in enumerate(templates) if t not in seen]
    if not s_cols or not u_cols:
        return None
    acc = _col_means(mat)
    avg_seen, avg_unseen = float(_nanmean(acc[s_cols])), float(_nanmean(acc[u_cols]))
    in_seen, in_unseen = _nanmean(mat[:, s_cols], axis=1), _nanmean(mat[:, u_cols], axis=1)
    ok = ~np.isnan(in_seen - in_unseen)
    lo, hi = paired_diff_interval(in_unseen[ok].tolist(), in_seen[ok].tolist(),
                                  [1.0] * int(ok.sum())) if ok.any() else (None, None)
    return {
        "value": r10(avg_seen - avg_unseen), "ci_low": _opt(lo), "ci_high": _opt(hi),
        "avg_seen": r10(avg_seen), "avg_unseen": r10(avg_unseen),
        "seen": [templates[i] for i in s_cols], "unseen": [templates[i] for i in u_cols],
        "n_items": int(ok.sum()), "method": "paired MOVER over items (exact limits)",
    }


def _opt(x: float | None) -> float | None:
    return None if x is None else r10(x)


def _cps_bound(mat: npt.NDArray[np.float64]) -> tuple[float, float]:
    """Where CPS must lie given each template's exact interval: CPS = (1 − (MaxP − AvgP))·MaxP is
    at most MaxP and at least AvgP² (it is at least AvgP·MaxP), so from AvgP's lower limit
    squared to the largest template upper limit."""
    sums, counts = np.nansum(mat, axis=1), np.sum(~np.isnan(mat), axis=1).astype(np.float64)
    keep = counts > 0
    avg_lo = clustered_proportion(sums[keep].tolist(), counts[keep].tolist()).limits()[0]
    highs = [proportion(col[~np.isnan(col)].tolist()).limits()[1]
             for col in mat.T if (~np.isnan(col)).any()]
    return avg_lo**2, max(highs)


class MultiPromptParams(AnalysisParams):
    """Parameters of ``multi_prompt``."""

    seen: list[str] = Field([], description="template ids seen in training (seen-vs-unseen gap)")
    role: Literal["all", "ID", "OOD"] = Field("all", description="which items to use")
    bootstrap: StrictInt = Field(1000, ge=1, description="item-bootstrap resamples")


@analysis("multi_prompt", MultiPromptParams, title="CPS", headline=3)
def multi_prompt(samples: Sequence[SampleRecord], buckets: Sequence[Bucket],
                 params: dict[str, Any], seed: int) -> AnalysisResult:
    """Per-template accuracy, MaxP, AvgP, CPS (headline, with an item-bootstrap CI), spread,
    worst case and the seen-vs-unseen template gap over ``samples``."""
    del buckets
    p = MultiPromptParams.model_validate(params)
    role, resamples, seen = p.role, p.bootstrap, set(p.seen)
    chosen = [s for s in samples if role == "all" or s.role == role]
    if not chosen:
        return AnalysisResult(name="multi_prompt", value=None, n=0)
    templates, items, mat = _table(chosen)
    acc = _col_means(mat)
    per_template = {
        t: {"accuracy": r10(float(acc[i])), "n": int(np.sum(~np.isnan(mat[:, i]))),
            "seen": t in seen}
        for i, t in enumerate(templates)
    }
    scores = prompt_scores({t: float(acc[i]) for i, t in enumerate(templates)})
    rng = np.random.default_rng(seed)
    boot = np.vstack([idx for _, idx in resample_rows(rng, len(items), resamples)])
    cps_boot = np.array([_cps_of(_col_means(mat[ix])) for ix in boot])
    lo, hi = _ci(cps_boot)
    if lo is not None and lo == hi:  # every resample alike (templates at 0% or 100%): not a
        lo, hi = (r10(x) for x in _cps_bound(mat))  # point, but the bound CPS must lie in
    details: dict[str, Any] = {
        "per_template": per_template, "max_p": r10(scores.max_p), "avg_p": r10(scores.avg_p),
        "cps": r10(scores.cps), "spread": r10(scores.spread), "worst": r10(scores.worst),
        "best_template": scores.best_template, "worst_template": scores.worst_template,
        "n_templates": scores.n_templates, "role": role, "level": LEVEL, "resamples": resamples,
        "seen_unseen_gap": _seen_gap(mat, templates, seen),
    }
    return AnalysisResult(name="multi_prompt", value=r10(scores.cps), ci_low=lo, ci_high=hi,
                          n=len(items), details=details)
