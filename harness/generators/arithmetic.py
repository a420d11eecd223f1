"""Arithmetic generators (length generalization over the number of digits)."""

from __future__ import annotations

import random
from typing import Any

from harness.generators.registry import generator


def random_number(rng: random.Random, digits: int) -> int:
    """A uniformly random integer with exactly ``digits`` digits (1 digit: 0–9)."""
    if digits < 1:
        raise ValueError("digits must be >= 1")
    if digits == 1:
        return rng.randrange(10)
    return rng.randrange(10 ** (digits - 1), 10**digits)


@generator("addition", difficulty="digits per operand", fields=("a", "b", "digits", "target"))
def addition(rng: random.Random, difficulty: int, *, reverse_output: bool = False) -> dict[str, Any]:
    """a + b with both operands of ``difficulty`` digits; optionally the sum's digits reversed."""
    a = random_number(rng, difficulty)
    b = random_number(rng, difficulty)
    total = str(a + b)
    return {
        "a": a,
        "b": b,
        "digits": difficulty,
        "target": total[::-1] if reverse_output else total,
    }
