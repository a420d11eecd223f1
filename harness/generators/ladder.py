"""A complexity ladder of list problems, each level in an ID and an OOD variant (after Scylla).

Scylla (Qi et al. 2024, "Quantifying Generalization Complexity for Large Language Models")
grades algorithmic tasks by the time complexity of their solution and pairs every level with
in-distribution and out-of-distribution data. This ladder does the same with one list problem per
complexity class:

====  ==========  ==============================================================
level class       question about a list of integers
====  ==========  ==============================================================
1     O(N)        the largest number
2     O(N log N)  the list sorted ascending
3     O(N^2)      how many pairs of positions sum to t
4     O(N^3)      how many triples of positions sum to t
5     O(2^N)      how many non-empty subsets of positions sum to t
====  ==========  ==============================================================

The difficulty value encodes level and variant: ``1..5`` is level 1..5 in its ID variant,
``11..15`` (``level + OOD_OFFSET``) the same level in its OOD variant, so a task declares
``roles: {id_max: 5}`` and few-shot exemplars only ever show the ID variant. What changes in the
OOD variant is the generator's ``shift`` parameter: ``range`` (one-digit numbers → two-digit
numbers), ``length`` (``n`` numbers → ``ood_n`` numbers) or ``sign`` (positive → signed numbers).
For levels 3-5 the target sum t is the sum of a random pair / triple / subset, so the answer is
at least 1.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from itertools import combinations
from typing import Any

from harness.generators.registry import generator

OOD_OFFSET = 10  # difficulty = level (ID variant) or level + OOD_OFFSET (OOD variant)
LEVELS = {1: "O(N)", 2: "O(N log N)", 3: "O(N^2)", 4: "O(N^3)", 5: "O(2^N)"}
SHIFTS = ("range", "length", "sign")


def decode(difficulty: int) -> tuple[int, str]:
    """``difficulty`` → (level, "id" | "ood"); ValueError outside 1..5 and 11..15."""
    variant = "ood" if difficulty > OOD_OFFSET else "id"
    level = difficulty - OOD_OFFSET if variant == "ood" else difficulty
    if level not in LEVELS:
        raise ValueError(
            f"ladder difficulty must be 1-5 (ID) or {OOD_OFFSET + 1}-{OOD_OFFSET + 5} (OOD), "
            f"got {difficulty}"
        )
    return level, variant


def _numbers(rng: random.Random, variant: str, shift: str, n: int, ood_n: int) -> list[int]:
    if shift not in SHIFTS:
        raise ValueError(f"ladder shift must be one of {', '.join(SHIFTS)}, got {shift!r}")
    ood = variant == "ood"
    size = ood_n if ood and shift == "length" else n
    if ood and shift == "range":
        return [rng.randint(10, 99) for _ in range(size)]
    if ood and shift == "sign":
        values = [rng.choice((-1, 1)) * rng.randint(1, 9) for _ in range(size)]
        if all(v > 0 for v in values):  # every OOD item carries the shift (issue 17, item 4)
            i = rng.randrange(size)
            values[i] = -values[i]
        return values
    return [rng.randint(1, 9) for _ in range(size)]


def count_sums(values: list[int], size: int | None, total: int) -> int:
    """How many index sets (of ``size`` elements; None: any non-empty size) sum to ``total``."""
    sizes = [size] if size is not None else range(1, len(values) + 1)
    return sum(1 for k in sizes for combo in combinations(values, k) if sum(combo) == total)


def _question(rng: random.Random, level: int, values: list[int]) -> tuple[str, str, int | None]:
    """(instruction, answer, target sum or None) for ``level`` on ``values``."""
    if level == 1:
        return "Give the largest number in the list.", str(max(values)), None
    if level == 2:
        return ("Sort the list in ascending order, numbers separated by spaces.",
                " ".join(str(v) for v in sorted(values)), None)
    size = {3: 2, 4: 3}.get(level)
    k = size if size is not None else rng.randint(1, len(values))
    total = sum(values[i] for i in rng.sample(range(len(values)), k))
    what = {3: "pairs of positions hold", 4: "triples of positions hold"}.get(
        level, "non-empty subsets of positions hold")
    instruction = f"How many {what} numbers that add up to {total}?"
    return instruction, str(count_sums(values, size, total)), total


def work(args: Mapping[str, Any]) -> tuple[float, str]:
    """About how many index sets one item's answer looks at (pairs, triples, subsets), and the
    parameter that sets the list size: the answers are counted by brute force."""
    try:
        level, variant = decode(int(args["difficulty"]))
    except (TypeError, ValueError):
        return 0.0, "n"  # the generator reports a bad difficulty itself
    key = "ood_n" if variant == "ood" and args["shift"] == "length" else "n"
    n = max(int(args[key]), 0)
    steps = {1: float(n), 2: n * math.log2(max(n, 2)), 3: float(math.comb(n, 2)),
             4: float(math.comb(n, 3))}.get(level)
    return (steps if steps is not None else 2.0 ** min(n, 1000)), key


@generator(
    "ladder", difficulty="complexity level 1-5 (ID variant) or level+10 (OOD variant)",
    fields=("level", "variant", "complexity", "values", "list", "total", "instruction", "target"),
    work=work,
)
def ladder(
    rng: random.Random, difficulty: int, *, shift: str = "range", n: int = 5, ood_n: int = 8
) -> dict[str, Any]:
    """One ladder item: a list problem of the level's complexity class, in the ID or OOD variant."""
    if n < 3 or ood_n < 3:
        raise ValueError("ladder lists need n >= 3 and ood_n >= 3 numbers")
    level, variant = decode(difficulty)
    values = _numbers(rng, variant, shift, n, ood_n)
    instruction, answer, total = _question(rng, level, values)
    return {
        "level": level,
        "variant": variant,
        "complexity": LEVELS[level],
        "values": values,
        "list": " ".join(str(v) for v in values),
        "total": total,
        "instruction": instruction,
        "target": answer,
    }
