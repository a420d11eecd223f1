"""Difficulty-rated data (MATH levels, Easy2Hard-Bench ratings): numbers out of labels, and
equal-count (quantile) buckets over a continuous difficulty.

- ``parse_difficulty``: a difficulty field such as ``"Level 3"`` becomes ``3.0`` through the
  task's ``fields.difficulty_pattern`` (first capturing group, else the whole match). A record
  whose value does not match (MATH train has two ``"Level ?"`` items) gives None and is dropped.
- ``quantile_edges``: Easy2Hard-Bench (Ding et al. 2024) rates each item on a continuous scale
  (IRT / Glicko-2 over human or model attempts); ``buckets: {quantiles: N}`` cuts that scale at
  its empirical quantiles into N buckets ``q1..qN`` of (about) equal size, computed from the
  records the task actually reads.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from harness.errors import TaskSpecError
from harness.spec.patterns import search


def parse_difficulty(value: Any, pattern: str) -> float | None:
    """The number ``pattern`` finds in ``str(value)``; None when it finds none (a search over
    the time bound of ``harness.spec.patterns`` is a ``TaskSpecError``)."""
    m = search(pattern, str(value), "fields.difficulty_pattern")
    if m is None:
        return None
    text = m.group(1) if m.re.groups else m.group(0)
    try:
        return float(text)
    except (TypeError, ValueError):
        return None


def quantile_labels(n: int) -> list[str]:
    """Bucket labels of ``n`` quantile buckets: q1 (easiest) … qn (hardest)."""
    return [f"q{i}" for i in range(1, n + 1)]


def quantile_edges(difficulties: Sequence[float], n: int) -> list[float]:
    """``n + 1`` strictly increasing cut points: min, the i/n empirical quantiles, max.

    Bucket i holds ``edges[i] <= d < edges[i+1]``; the last bucket also holds the maximum.
    Too few distinct values for ``n`` buckets is a spec error (naming ``buckets.quantiles``).
    """
    vals = [float(d) for d in difficulties if not math.isnan(float(d))]
    if not vals:
        raise TaskSpecError("buckets.quantiles: no record has a numeric difficulty")
    import numpy as np  # only quantile buckets need it

    arr = np.asarray(vals, dtype=np.float64)
    edges = [float(x) for x in np.quantile(arr, np.linspace(0.0, 1.0, n + 1))]
    if any(b <= a for a, b in zip(edges[:-1], edges[1:], strict=True)):
        raise TaskSpecError(
            f"buckets.quantiles: {n} buckets need distinct quantiles, but the difficulty has "
            f"only {len(set(vals))} distinct value(s) over {len(vals)} records"
        )
    return edges
