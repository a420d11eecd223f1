"""Sequence generators (length generalization over the number of symbols)."""

from __future__ import annotations

import random
import string
from typing import Any

from harness.generators.registry import generator


def random_symbols(rng: random.Random, length: int, alphabet: str) -> list[str]:
    """``length`` symbols drawn uniformly (with replacement) from ``alphabet``."""
    if length < 1:
        raise ValueError("length must be >= 1")
    if not alphabet:
        raise ValueError("alphabet must not be empty")
    return [alphabet[rng.randrange(len(alphabet))] for _ in range(length)]


def _record(symbols: list[str], out: list[str], sep: str) -> dict[str, Any]:
    return {"text": sep.join(symbols), "length": len(symbols), "target": sep.join(out)}


@generator("copy", difficulty="string length", fields=("text", "length", "target"))
def copy(
    rng: random.Random, difficulty: int, *, alphabet: str = string.ascii_lowercase, sep: str = " "
) -> dict[str, Any]:
    """Repeat a random string of ``difficulty`` symbols (joined by ``sep``)."""
    s = random_symbols(rng, difficulty, alphabet)
    return _record(s, s, sep)


@generator("reverse", difficulty="string length", fields=("text", "length", "target"))
def reverse(
    rng: random.Random, difficulty: int, *, alphabet: str = string.ascii_lowercase, sep: str = " "
) -> dict[str, Any]:
    """Reverse a random string of ``difficulty`` symbols (joined by ``sep``)."""
    s = random_symbols(rng, difficulty, alphabet)
    return _record(s, s[::-1], sep)
