"""The ``within_1pct`` metric: is the answer's last number within 1% of the target?

A metric is ``(extracted, target) -> score``; ``binary=True`` says it gives only 0.0 and 1.0,
so tables call its mean an accuracy. The ``harness.metrics`` entry point of the same name lets
task files use it without importing this module first.
"""

from __future__ import annotations

import re

from harness.api import metric

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


@metric("within_1pct", binary=True)
def within_1pct(extracted: str, target: str) -> float:
    """1.0 when the last number in the answer is within 1% of the target (no number: 0.0)."""
    found = _NUMBER.findall(extracted.replace(",", ""))
    if not found:
        return 0.0
    want = float(target)
    return 1.0 if abs(float(found[-1]) - want) <= 0.01 * abs(want) else 0.0
