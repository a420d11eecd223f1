"""Arithmetic generators (length generalization over the number of digits).

Each record carries the operands, the answer (``target``) and a one-line worked solution
(``scratchpad``) that a task's template ``target:`` can render for exemplars, so the same items
serve direct and scratchpad prompting (Anil et al. 2022; Zhou et al. 2024).
"""

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


def addition_steps(a: int, b: int) -> str:
    """Column addition from the least significant digit, one ``x+y+carry=s`` step per column.

    ``addition_steps(457, 168)`` is ``"7+8+0=15, 5+6+1=12, 4+1+1=6."``; a final carry shows up
    in the last step's sum (``"9+9+0=18."`` for 9 + 9).
    """
    da, db = str(a)[::-1], str(b)[::-1]
    steps, carry = [], 0
    for i in range(max(len(da), len(db))):
        x = int(da[i]) if i < len(da) else 0
        y = int(db[i]) if i < len(db) else 0
        s = x + y + carry
        steps.append(f"{x}+{y}+{carry}={s}")
        carry = s // 10
    return ", ".join(steps) + "."


HINTS = "abcdefghijklmnopqrstuvwxyz"  # index-hint letters: a = units, b = tens, ...


def hinted(digits: str, start: int = 0) -> str:
    """``digits`` (most significant first) with each digit after the letter of its place,
    counted from the units: ``hinted("321")`` is ``"c3b2a1"`` (Zhou et al. 2023's index hints,
    lettered from the units so that a carry digit gets the next letter). ``start``: the units'
    letter is ``HINTS[start]`` (``hinted("321", 2)`` is ``"e3d2c1"``)."""
    if start + len(digits) > len(HINTS):
        raise ValueError(f"index_hints: at most {len(HINTS)} places (one letter each), "
                         f"got {len(digits)} from letter {start + 1}")
    n = len(digits)
    return "".join(HINTS[start + n - 1 - i] + d for i, d in enumerate(digits))


@generator("addition", difficulty="digits per operand",
           fields=("a", "b", "digits", "target", "scratchpad", "a_hinted", "b_hinted"))
def addition(
    rng: random.Random, difficulty: int, *, reverse_output: bool = False,
    index_hints: bool = False, hint_window: bool = False,
) -> dict[str, Any]:
    """a + b with both operands of ``difficulty`` digits; optionally the sum's digits reversed
    (least significant first, the order in which column addition produces them).

    ``index_hints``: the record also has ``a_hinted`` and ``b_hinted`` (``c3b2a1`` for 321, see
    ``hinted``), and the target is the sum written the same way (reversed: ``a7b7c7`` for 777),
    so every digit is tagged with its place (Zhou et al. 2023).

    ``hint_window`` (with ``index_hints``): the units' letter is drawn per item, uniformly from
    those that leave room for every place and a carry, so the hints are a window of consecutive
    letters at a random offset: short operands then carry every letter a long one needs, as
    Zhou et al. 2023 draw their hints (as we read them)."""
    if hint_window and not index_hints:
        raise ValueError("hint_window: only with index_hints: true")
    if index_hints and difficulty >= len(HINTS):
        raise ValueError(f"index_hints: at most {len(HINTS) - 1} digits per operand (the sum "
                         f"may have one more), got {difficulty}")
    a = random_number(rng, difficulty)
    b = random_number(rng, difficulty)
    total = str(a + b)
    rec: dict[str, Any] = {
        "a": a,
        "b": b,
        "digits": difficulty,
        "target": total[::-1] if reverse_output else total,
        "scratchpad": addition_steps(a, b),
    }
    if index_hints:
        start = rng.randrange(len(HINTS) - difficulty) if hint_window else 0
        h = hinted(total, start)
        pairs = [h[i:i + 2] for i in range(0, len(h), 2)]
        rec.update(a_hinted=hinted(str(a), start), b_hinted=hinted(str(b), start),
                   target="".join(pairs[::-1]) if reverse_output else h)
    return rec


@generator("multiplication", difficulty="digits of the first operand",
           fields=("a", "b", "digits", "b_digits", "target"))
def multiplication(
    rng: random.Random, difficulty: int, *, b_digits: int | None = None
) -> dict[str, Any]:
    """a × b with ``a`` of ``difficulty`` digits and ``b`` of ``b_digits`` digits (default: the
    same as ``a``, i.e. n × n multiplication as in Dziri et al. 2023)."""
    m = difficulty if b_digits is None else b_digits
    if m < 1:
        raise ValueError("b_digits must be >= 1")
    a = random_number(rng, difficulty)
    b = random_number(rng, m)
    return {"a": a, "b": b, "digits": difficulty, "b_digits": m, "target": str(a * b)}
