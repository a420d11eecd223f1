"""The ``digit_list`` generator: a list of random digits whose length is the difficulty.

A generator is a plain function ``(rng, difficulty, **params) -> record``. It must use only
``rng`` for randomness (never the ``random`` module, time or hash order), so that the harness's
seeding makes every item reproducible. ``@generator`` registers it under the name task files use;
the ``harness.generators`` entry point with the same name lets the harness find it without
importing this module first.
"""

from __future__ import annotations

import random
from typing import Any

from harness.api import generator


@generator("digit_list", difficulty="number of digits in the list",
           fields=("digits", "length", "target"))
def digit_list(
    rng: random.Random, difficulty: int, *, low: int = 0, high: int = 9
) -> dict[str, Any]:
    """``difficulty`` digits drawn uniformly from ``low..high``, space-separated, and their sum."""
    if difficulty < 1:
        raise ValueError("the list needs at least one digit")
    if not 0 <= low <= high <= 9:
        raise ValueError("low and high must satisfy 0 <= low <= high <= 9")
    digits = [rng.randint(low, high) for _ in range(difficulty)]
    return {"digits": " ".join(map(str, digits)), "length": difficulty, "target": str(sum(digits))}
