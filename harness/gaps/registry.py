"""Registry of generalization gaps: ``@gap("name")`` functions over one report's bucket scores.

A task names the gaps it wants in ``gaps.report``; each is computed once per (template,
condition) report. A gap gets a ``GapContext`` (each bucket's scores, the buckets, the task's
``gaps:`` parameters, the report's seed, bootstrap resamples shared by every gap of the report
that wants them, and the ID items' chance level) and returns a pydantic model, its JSON in
results.json, or None where it cannot be computed (no OOD samples, say). Whether the report's
gaps are measurable at all (floor, ceiling) is decided once, before any gap runs
(``gaps/report``): a gap only ever runs on a measurable report. A model with a ``value`` field
(and ``ci_low``/``ci_high``, where it has an interval) gives the per-task number a leaderboard
shows.

A gap also says how a leaderboard shows it (``BoardInfo``: title, headline position, better
direction, aggregation over tasks); the leaderboard reads that from here (``board_info``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel

from harness import plugins
from harness.board_info import BoardInfo
from harness.registry import Registry
from harness.scoring.stats import bootstrap_means
from harness.spec.buckets import Bucket
from harness.spec.scoring import GapsSpec

Floats = npt.NDArray[np.float64]


@dataclass(frozen=True)
class GapContext:
    """What every gap of one report gets: the report's scores, and what the gaps share."""

    per_bucket: Sequence[Sequence[float]]  # each bucket's scores, in item-id order
    buckets: Sequence[Bucket]  # the task's ordered buckets (same order as per_bucket)
    spec: GapsSpec  # the task's gaps: parameters (bootstrap resamples, horizon threshold)
    seed: int  # the report's gap seed (derive_seed(seed, task, template, "gaps"[, condition]))
    chance: float  # chance level of the ID items (0 for generation, mean 1/k for choices)

    @cached_property
    def ids(self) -> list[float]:
        """The ID samples' scores, pooled over buckets."""
        return self._role("ID")

    @cached_property
    def oods(self) -> list[float]:
        """The OOD samples' scores, pooled over buckets."""
        return self._role("OOD")

    def _role(self, role: str) -> list[float]:
        pairs = zip(self.buckets, self.per_bucket, strict=True)
        return [x for b, scores in pairs if b.role == role for x in scores]

    @property
    def id_accuracy(self) -> float:
        """Pooled ID accuracy (the report has ID samples: a measurable report does)."""
        return math.fsum(self.ids) / len(self.ids)

    @cached_property
    def resampled_means(self) -> tuple[Floats, Floats]:
        """ID and OOD accuracy of each of ``spec.bootstrap`` resamples (items resampled within
        role, one stream seeded with ``seed``): computed once, on first use, and shared by every
        gap that asks, so their intervals describe the same resampled data sets (the built-in
        gaps use score intervals instead, ``scoring/intervals``). Needs ID and OOD samples."""
        return bootstrap_means(self.ids, self.oods, seed=self.seed, resamples=self.spec.bootstrap)


GapFn = Callable[[GapContext], BaseModel | None]


@dataclass(frozen=True)
class Gap(BoardInfo):
    """A registered gap: its function, and how a leaderboard shows it (``BoardInfo``)."""

    name: str  # the name task files use (gaps.report)
    fn: GapFn  # (context) -> its model, or None where it cannot be computed

    def __call__(self, ctx: GapContext) -> BaseModel | None:
        return self.fn(ctx)


def _from_object(name: str, obj: object) -> Gap:
    if isinstance(obj, Gap):
        return obj
    return Gap(name, obj)  # type: ignore[arg-type]


# the built-ins: every module of this package, each registering its gaps with @gap
GAPS: Registry[Gap] = Registry("gap", plugins.GAPS, package="harness.gaps",
                               from_object=_from_object, list_known=True)

# ``@gap(name, *, title=None, headline=None, better="high", board="mean")``: register
# ``fn(context) -> model | None`` as the gap ``name``; the rest: how a leaderboard shows it (see
# ``BoardInfo``). The decorated name is the ``Gap``.
gap = GAPS.item_decorator(Gap)


def get_gap(name: str) -> Gap:
    """Look up a gap: built-ins first, then the ``harness.gaps`` entry points."""
    return GAPS.get(name)


def board_info(name: str) -> BoardInfo:
    """How a leaderboard shows gap ``name``: a built-in's metadata, else the defaults (titled by
    its name, no headline column, higher is better, mean). Plugin metadata is not read, so a
    board does not depend on what is installed or loaded where it is built."""
    GAPS.load_builtins()
    return GAPS.items[name] if GAPS.is_builtin(name) else BoardInfo()
