"""The report of the gaps a task asks for (``gaps.report``): is the pair of roles measurable
(floor, ceiling), then every requested gap in turn, built-in (``gaps/builtin``) or registered by a
plugin.

A gap is only a number where it is measurable (``status``): at the **floor**, when the pooled ID
accuracy is not significantly above the **baseline** (its Wilson 95% lower bound is not above the
baseline of the pooled ID items, ``scoring/baselines``: a constant answer chosen without the item
it scores, never below guessing nor below the chance level of a choice task), the model has
nothing to lose out of distribution, and at the **ceiling**, when both roles are at 100%,
nothing can be lost either: then no gap is reported (None), with the reason. This is decided
once per report, before any gap runs.

Beside the pooled ID−OOD gap the report carries the **edge gap** (``gaps/builtin``): last ID
bucket − first OOD bucket, so a fall inside the ID range is not read as a fall past its edge.

The three built-in gaps have a field of their own in ``GapReport`` (and in results.json); any
other registered gap's model is stored as its JSON under ``GapReport.extra``, which results.json
omits while it is empty.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.answers.metrics import checked_metric
from harness.errors import HarnessError
from harness.gaps.builtin import EdgeGap, GapStatus, Horizon, IdOodGap, Retention, edge_gap
from harness.gaps.registry import GapContext, get_gap
from harness.scoring.aggregates import not_above, scores_by_bucket
from harness.scoring.baselines import answer_key, constant_baseline
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10, wilson_interval
from harness.spec.buckets import Bucket
from harness.spec.scoring import ExtractSpec, GapsSpec

__all__ = ["GapReport", "chance_level", "compute_gaps", "gaps_from_scores", "measurability",
           "sample_chance", "value_and_ci"]


def _sparse() -> Any:
    """A mapping field that is empty by default and left out of the JSON while empty (a report
    of the built-in gaps only keeps the JSON it always had)."""
    return Field(default_factory=dict, exclude_if=lambda value: not value)


class GapReport(BaseModel):
    """The gaps a task asked for (``gaps.report``); one not asked for, not computable or not
    measurable (``status`` floor or ceiling) is None."""

    status: GapStatus = "measured"  # floor: ID not above its baseline; ceiling: both at 100%
    chance: float = 0.0  # chance level of the pooled ID items (0 for generation, mean 1/k for MC)
    baseline: float | None = None  # the floor's level: the pooled ID items' baseline
    reason: str | None = None  # why no gap is reported when status is not "measured"
    id_ood: IdOodGap | None = None  # absolute ID − OOD gap
    edge: EdgeGap | None = None  # last ID bucket − first OOD bucket (beside id_ood)
    retention: Retention | None = None  # OOD / ID accuracy ratio
    horizon: Horizon | None = None  # extrapolation horizon
    extra: dict[str, dict[str, Any]] = _sparse()  # any other registered gap → its model's JSON
    budget_bound: list[str] = Field(  # the buckets the gaps rest on whose wrong answers the
        default_factory=list, exclude_if=lambda v: not v)  # budget cut (answers/budget)

    model_config = ConfigDict(frozen=True, extra="forbid")


# the gaps with a field of their own in GapReport; any other goes under GapReport.extra
_OWN_FIELD = ("id_ood", "retention", "horizon")


def measurability(
    ids: Sequence[float], oods: Sequence[float], baseline: float, what: str = "chance",
) -> tuple[GapStatus, str | None]:
    """Whether gaps between these pooled ID and OOD scores mean anything (see module;
    ``baseline``: the pooled ID items' baseline, at least their chance level; ``what``: what
    that level is, for the reason)."""
    if not ids:
        return "measured", None
    total = math.fsum(ids)
    if not_above(total, len(ids), baseline):
        lo, _ = wilson_interval(total, len(ids))
        return "floor", (f"ID accuracy {100 * total / len(ids):.1f}% (n={len(ids)}, 95% CI from "
                         f"{100 * lo:.1f}%) is not above {what} ({100 * baseline:.1f}%)")
    if oods and min(ids) >= 1.0 and min(oods) >= 1.0:
        return "ceiling", f"ID and OOD both at 100% (n={len(ids)} and {len(oods)})"
    return "measured", None


def value_and_ci(d: dict[str, Any]) -> tuple[float | None, float | None, float | None]:
    """``value``, ``ci_low`` and ``ci_high`` of a gap's JSON (``GapReport.extra``); a field that is
    missing or not a number is None."""
    return _number(d.get("value")), _number(d.get("ci_low")), _number(d.get("ci_high"))


def _number(x: object) -> float | None:
    return float(x) if isinstance(x, int | float) and not isinstance(x, bool) else None


def compute_gaps(
    samples: Sequence[SampleRecord], buckets: Sequence[Bucket], spec: GapsSpec, seed: int,
    metric: str = "exact_match", extract: ExtractSpec | None = None,
) -> GapReport:
    """The gaps in ``spec.report``; ``seed`` seeds their shared bootstrap (derive it per
    task/template). The chance level comes from the ID samples' choices, the baseline from their
    targets (``scoring/baselines``: scored with ``metric``, candidates made by ``extract``).
    """
    ids = [s for s in samples if s.role == "ID"]
    baseline = constant_baseline([answer_key(s) for s in ids], checked_metric(metric), extract)
    return gaps_from_scores(scores_by_bucket(samples, buckets), buckets, spec, seed,
                            chance_level(ids), baseline)


def chance_level(samples: Sequence[SampleRecord]) -> float:
    """Mean chance of a right answer: 1/k for a k-way choice, 0 for generation."""
    if not samples:
        return 0.0
    return math.fsum(sample_chance(s) for s in samples) / len(samples)


def sample_chance(s: SampleRecord) -> float:
    """1/k for a sample with k choices, 0 for a generated answer."""
    return 1.0 / len(s.choices) if s.choices else 0.0


def gaps_from_scores(
    per_bucket: Sequence[Sequence[float]], buckets: Sequence[Bucket], spec: GapsSpec, seed: int,
    chance: float = 0.0, baseline: float | None = None,
) -> GapReport:
    """``compute_gaps`` from each bucket's scores (in item-id order, as ``scores_by_bucket``
    gives them), the ID items' chance level and their baseline (the task's declared one, else
    the given one, never below chance): the measurability first, then, on a measurable report,
    every gap of ``spec.report`` in turn (a gap that cannot be computed is None)."""
    ctx = GapContext(per_bucket, buckets, spec, seed, chance)
    if spec.baseline is not None:
        baseline = spec.baseline
    level = max(chance, baseline if baseline is not None else chance)
    what = ("chance" if baseline is None or level == chance else
            "the declared baseline" if spec.baseline is not None else
            "the best constant answer's score")
    status, reason = measurability(ctx.ids, ctx.oods, level, what)
    shown = None if baseline is None else r10(level)
    if status != "measured":
        return GapReport(status=status, chance=r10(chance), baseline=shown, reason=reason)
    fields: dict[str, Any] = {"chance": r10(chance), "baseline": shown}
    extra: dict[str, dict[str, Any]] = {}
    for name in spec.report:
        model = get_gap(name)(ctx)
        if model is None:
            continue
        if name == "id_ood":
            fields["edge"] = edge_gap(ctx)
        if name in _OWN_FIELD:
            fields[name] = model
            continue
        extra[name] = model.model_dump(mode="json")
        if "value" not in extra[name]:
            raise HarnessError(f"gap {name!r}: its model {type(model).__name__} has no field "
                               "'value' (the number a leaderboard shows)")
    return GapReport.model_validate({**fields, "extra": extra})
