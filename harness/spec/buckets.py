"""Ordered difficulty buckets and their roles (ID / OOD), built from a task's spec."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.spec.difficulty import quantile_edges, quantile_labels
from harness.spec.task import BucketsSpec, RolesSpec

Role = Literal["ID", "OOD"]


def format_value(x: float) -> str:
    """Render a difficulty value: integers without a decimal point."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Bucket:
    """One bucket of the difficulty axis."""

    index: int  # position in the ordered bucket list
    label: str  # how users name it (`--bucket 7`, table rows): "7" or "6-10" style
    lo: float  # smallest difficulty value in the bucket (inclusive)
    hi: float  # per-value buckets: the value; edge buckets: the upper edge (exclusive)
    closed: bool  # True when hi is inclusive (per-value buckets)
    role: Role  # in-distribution or out-of-distribution

    def contains(self, d: float) -> bool:
        """Whether difficulty ``d`` falls in this bucket."""
        return self.lo <= d <= self.hi if self.closed else self.lo <= d < self.hi

    @property
    def top(self) -> float:
        """Largest difficulty this bucket can hold (used for horizons)."""
        if self.closed:
            return self.hi
        whole = float(self.lo).is_integer() and float(self.hi).is_integer()
        return self.hi - 1 if whole else self.hi

    def values(self) -> list[int]:
        """The integer difficulty values the bucket covers (for procedural generation)."""
        if self.closed:
            return [int(self.lo)] if float(self.lo).is_integer() else []
        return list(range(math.ceil(self.lo), math.ceil(self.hi)))


def build_buckets(
    buckets: BucketsSpec, roles: RolesSpec, difficulties: Sequence[float] | None = None
) -> list[Bucket]:
    """Turn the spec into ordered buckets with roles; errors name the spec key (ValueError).

    ``buckets.quantiles`` cuts ``difficulties`` (the data's values) at its quantiles; without
    them (listing, validation) the buckets q1..qN get NaN bounds and hold nothing."""
    spans: list[tuple[str, float, float, bool]] = []
    if buckets.quantiles is not None:
        if roles.id is None:
            raise ValueError("roles: quantile buckets need roles.id (labels q1..qN), not id_max or "
                             "id_range")
        n, names = buckets.quantiles, quantile_labels(buckets.quantiles)
        e = quantile_edges(difficulties, n) if difficulties is not None else [math.nan] * (n + 1)
        spans = [(names[i], e[i], e[i + 1], i == n - 1) for i in range(n)]
    elif buckets.values is not None:
        spans = [(format_value(v), v, v, True) for v in buckets.values]
    else:
        assert buckets.edges is not None
        e = buckets.edges
        for a, b in zip(e, e[1:], strict=False):
            whole = float(a).is_integer() and float(b).is_integer()
            label = (
                format_value(a) if whole and b - a == 1
                else f"{format_value(a)}-{format_value(b - 1)}" if whole
                else f"[{format_value(a)},{format_value(b)})"
            )
            spans.append((label, a, b, False))
    labels = [s[0] for s in spans]
    if roles.id is not None:
        wanted = [format_value(x) if isinstance(x, (int, float)) else str(x) for x in roles.id]
        unknown = [w for w in wanted if w not in labels]
        if unknown:
            raise ValueError(f"roles.id: unknown bucket label(s) {unknown}; buckets are {labels}")
        id_set = set(wanted)
    elif roles.id_range is not None:
        id_set = _inside(spans, roles.id_range.min, roles.id_range.max)
    else:
        assert roles.id_max is not None
        id_set = set()
        for lab, lo, hi, closed in spans:
            top = Bucket(0, lab, lo, hi, closed, "ID").top
            if top <= roles.id_max:
                id_set.add(lab)
            elif lo <= roles.id_max and not (math.isnan(lo) or math.isnan(top)):
                raise ValueError(
                    f"roles.id_max: bucket {lab} holds values on both sides of id_max "
                    f"{format_value(roles.id_max)} (from {format_value(lo)} to "
                    f"{format_value(top)}); put a bucket edge just past id_max, or set id_max "
                    "to a bucket's last value")
    out = [
        Bucket(i, lab, lo, hi, closed, "ID" if lab in id_set else "OOD")
        for i, (lab, lo, hi, closed) in enumerate(spans)
    ]
    if not any(b.role == "ID" for b in out):
        raise ValueError("roles: no bucket is in-distribution")
    return out


def _inside(spans: list[tuple[str, float, float, bool]], lo: int, hi: int) -> set[str]:
    """Labels of the buckets inside ``[lo, hi]``; a bucket partly inside is an error (it would
    mix ID and OOD values)."""
    inside = set()
    for lab, b_lo, b_hi, closed in spans:
        top = Bucket(0, lab, b_lo, b_hi, closed, "ID").top
        if lo <= b_lo and top <= hi:
            inside.add(lab)
        elif b_lo <= hi and top >= lo:
            raise ValueError(f"roles.id_range: bucket {lab} is partly inside the range "
                             f"{lo}-{hi}; make its edges meet the range's ends")
    return inside


def assign(buckets: list[Bucket], difficulty: float) -> Bucket | None:
    """The bucket holding ``difficulty``, or None when it lies outside every bucket."""
    for b in buckets:
        if b.contains(difficulty):
            return b
    return None
