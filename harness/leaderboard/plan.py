"""Precision by design: how many items per bucket a leaderboard run needs, per task.

**The rule.** For a target half-width ``h`` (default ±10 points at 95%) and a floor ``m`` (default
30 items per bucket), a task with ``k_ID`` ID buckets and ``k_OOD`` OOD buckets is run at

    per_bucket = max(m, ceil(N / k_ID), ceil(N / k_OOD))

items per bucket, where ``N`` is the fewest items whose Wilson 95% interval is within ``±h`` at
any accuracy (93 for ±10 points; the widest interval is at 50%). Pooled ID and pooled OOD
accuracy then have at least ``N`` items each, and every bucket at least ``m``. Where a bucket
holds fewer items than that (a fixed data set), the task runs on all of them and the plan says
which target it misses. Only the buckets a task evaluates count: a task whose few-shot
conditions all ``evaluate`` OOD buckets (MATH SGR: levels 4-5) is sized on those, with no ID role.
``--limit-per-bucket`` applies to a whole run, so tasks are run in groups that share a limit
(:func:`groups`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.leaderboard.scores import items_for, worst_half_width

TARGET = 0.10  # default target: pooled ID and OOD accuracy within ±10 points (95%)
MIN_PER_BUCKET = 30  # default floor on items per bucket

@dataclass(frozen=True)
class TaskPlan:
    """The planned run size of one task."""

    task: str  # task address
    limit: int | None  # --limit-per-bucket to run it with (None: every item)
    n_id: int  # pooled ID items at that limit
    n_ood: int  # pooled OOD items at that limit
    smallest_bucket: int  # items in its smallest bucket at that limit
    prompts: int  # prompts sent per model (items × templates × conditions)
    half_id: float  # worst-case Wilson 95% half-width of pooled ID accuracy
    half_ood: float  # the same for pooled OOD accuracy (0 without OOD buckets)
    short: str | None  # which target it misses (too few items in the data), or None
    spec_sha256: str = ""  # today's hash of its task file (what a measured cost must match)


def evaluated_buckets(evaluates: Iterable[Sequence[str | float] | None]) -> set[str] | None:
    """The bucket labels a task evaluates, from its few-shot conditions' ``evaluate`` lists (a
    task with ``evaluate: [4, 5]`` in every condition never runs its other buckets); None: every
    bucket (no conditions, or one without a list)."""
    from harness.items import labels

    out: set[str] = set()
    for values in evaluates:
        found = labels(values)
        if found is None:
            return None
        out |= found
    return out or None


def per_bucket(n_id_buckets: int, n_ood_buckets: int, target: float = TARGET,
               min_per_bucket: int = MIN_PER_BUCKET) -> int:
    """Items per bucket the rule asks for (see the module docstring)."""
    need = items_for(target)
    parts = [min_per_bucket] + [math.ceil(need / k) for k in (n_id_buckets, n_ood_buckets) if k]
    return max(parts)


def plan_counts(task: str, buckets: Sequence[tuple[str, int]], target: float = TARGET,
                min_per_bucket: int = MIN_PER_BUCKET, prompts: int = 0) -> TaskPlan:
    """The plan of a task from its buckets as ``(role, items available)``; ``prompts``: what
    running it at the planned limit sends (for the estimate)."""
    k_id = sum(1 for r, _ in buckets if r == "ID")
    k_ood = sum(1 for r, _ in buckets if r == "OOD")
    want = per_bucket(k_id, k_ood, target, min_per_bucket)
    most = max((n for _, n in buckets), default=0)
    limit = want if want < most else None
    got = [(r, min(n, want)) for r, n in buckets]
    n_id = sum(n for r, n in got if r == "ID")
    n_ood = sum(n for r, n in got if r == "OOD")
    small = min((n for _, n in got), default=0)
    # a role the task does not evaluate (no OOD buckets; an `evaluate` list of OOD buckets only)
    h_id = worst_half_width(n_id) if k_id else 0.0
    h_ood = worst_half_width(n_ood) if k_ood else 0.0
    misses = []
    if h_id > target or h_ood > target:
        misses.append(f"±{100 * max(h_id, h_ood):.1f} pts, not ±{100 * target:.0f}")
    if small < min_per_bucket:
        misses.append(f"{small} items in its smallest bucket, not {min_per_bucket}")
    return TaskPlan(task, limit, n_id, n_ood, small, prompts, round(h_id, 4), round(h_ood, 4),
                    "; ".join(misses) or None)


def plan_tasks(names: Sequence[str], seed: int = 0, target: float = TARGET,
               min_per_bucket: int = MIN_PER_BUCKET) -> list[TaskPlan]:
    """Plans for tasks or suites (resolved as ``harness eval --tasks`` does), items counted from
    the task files without generating any (data-backed tasks read ``GENHARNESS_DATA``)."""
    from harness.config import RunConfig
    from harness.run.plan import plan_task
    from harness.run.results import spec_hash
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
    cfg = RunConfig(model="plan", tasks=list(names), seed=seed, output_dir=Path("plan"))
    board = cfg.model_copy(update={"matched_control": True})  # as the board runs it
    out = []
    for ref in index.resolve(list(names)):
        spec = index.spec(ref)
        full = plan_task(ref, spec, cfg)
        evaluated = evaluated_buckets(c.spec.evaluate for c in full.conditions)
        counts = [(b.role, full.inst.count({b.label})) for b in full.buckets
                  if evaluated is None or b.label in evaluated]
        plan = plan_counts(ref.address, counts, target, min_per_bucket)
        limited = board.model_copy(update={"limit_per_bucket": plan.limit})
        prompts = plan_task(ref, spec, limited).prompts()
        out.append(dataclasses.replace(plan, prompts=prompts, spec_sha256=spec_hash(spec)))
    return out


def groups(plans: Sequence[TaskPlan]) -> list[tuple[int | None, list[str]]]:
    """Tasks grouped by limit (one ``harness eval`` each), smallest limit first, None last."""
    by: dict[int | None, list[str]] = {}
    for p in plans:
        by.setdefault(p.limit, []).append(p.task)
    return sorted(by.items(), key=lambda kv: (kv[0] is None, kv[0] or 0))
