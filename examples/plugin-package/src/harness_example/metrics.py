"""The ``digit_sum_match`` metric: is the answer's integer the sum?

A metric is ``(extracted, target) -> score`` with 1.0 for correct and 0.0 for wrong (or partial
credit between). ``@metric`` registers it (``binary=True``: only 0.0 and 1.0, so tables call its
mean an accuracy); the ``harness.metrics`` entry point with the same name lets task files use it
without importing this module first.
"""

from __future__ import annotations

import re

from harness.api import metric

_INT = re.compile(r"-?\d+")


@metric("digit_sum_match", binary=True)
def digit_sum_match(extracted: str, target: str) -> float:
    """1.0 when the last integer in the answer equals the target sum (no integer: 0.0)."""
    found = _INT.findall(extracted.replace(",", ""))
    return 1.0 if found and int(found[-1]) == int(target) else 0.0
