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
    rng: random.Random, difficulty: int, *, alphabet: str = string.ascii_lowercase, sep: str = " ",
    unique: bool = False,
) -> dict[str, Any]:
    """Repeat a random string of ``difficulty`` symbols (joined by ``sep``).

    ``unique``: no symbol occurs twice (drawn without replacement), the case Zhou et al. 2023
    expect to length-generalize; by default symbols are drawn with replacement and may repeat."""
    if not unique:
        s = random_symbols(rng, difficulty, alphabet)
        return _record(s, s, sep)
    symbols = list(dict.fromkeys(alphabet))
    if not 1 <= difficulty <= len(symbols):
        raise ValueError(f"unique: length must be 1-{len(symbols)} (the alphabet's distinct "
                         f"symbols), got {difficulty}")
    s = rng.sample(symbols, difficulty)
    return _record(s, s, sep)


@generator("reverse", difficulty="string length", fields=("text", "length", "target"))
def reverse(
    rng: random.Random, difficulty: int, *, alphabet: str = string.ascii_lowercase, sep: str = " "
) -> dict[str, Any]:
    """Reverse a random string of ``difficulty`` symbols (joined by ``sep``)."""
    s = random_symbols(rng, difficulty, alphabet)
    return _record(s, s[::-1], sep)


@generator("sort", difficulty="string length", fields=("text", "length", "target"))
def sort(
    rng: random.Random, difficulty: int, *, alphabet: str = string.ascii_lowercase, sep: str = " "
) -> dict[str, Any]:
    """Sort a random string of ``difficulty`` symbols (with repeats) by their order in
    ``alphabet``."""
    s = random_symbols(rng, difficulty, alphabet)
    return _record(s, sorted(s, key=alphabet.index), sep)


@generator("parity", difficulty="bits",
           fields=("text", "length", "target", "scratchpad", "text_hinted", "scratchpad_hinted"))
def parity(rng: random.Random, difficulty: int, *, sep: str = " ", index_hints: bool = False,
           hint_window: bool = False) -> dict[str, Any]:
    """Parity (1 when the number of ones is odd, else 0) of ``difficulty`` random bits.

    ``scratchpad`` is the running parity after each bit (Anil et al. 2022's scratchpad idea):
    for ``1 0 1 1`` it is ``1 1 0 1``; its last entry is the answer.

    ``index_hints``: also ``text_hinted``, each bit after a letter naming its place
    (``a1b0c1d1``), and ``scratchpad_hinted``, per place its letter, its bit and the running
    parity (``a1=1b0=1c1=0d1=1``): a step finds its bit by the letter (Zhou et al. 2023's index
    hints) and writes it before combining it with the previous parity, so each step has a part
    that is learnable alone; ``hint_window``: the first bit's letter is drawn per item from
    those that leave room for every bit, so short strings carry every letter a long one needs."""
    if hint_window and not index_hints:
        raise ValueError("hint_window: only with index_hints: true")
    if index_hints and difficulty > len(string.ascii_lowercase):
        raise ValueError(f"index_hints: at most {len(string.ascii_lowercase)} bits (one letter "
                         f"each), got {difficulty}")
    bits = random_symbols(rng, difficulty, "01")
    running, p = [], 0
    for bit in bits:
        p ^= int(bit)
        running.append(str(p))
    rec = {
        "text": sep.join(bits), "length": difficulty, "target": str(p),
        "scratchpad": sep.join(running),
    }
    if index_hints:
        start = rng.randrange(27 - difficulty) if hint_window else 0
        tags = string.ascii_lowercase[start:start + difficulty]
        rec.update(text_hinted="".join(t + b for t, b in zip(tags, bits, strict=True)),
                   scratchpad_hinted="".join(f"{t}{b}={r}" for t, b, r in
                                             zip(tags, bits, running, strict=True)))
    return rec


@generator("count", difficulty="numbers to write", fields=("start", "end", "length", "target"))
def count(
    rng: random.Random, difficulty: int, *, max_start: int = 100, sep: str = " "
) -> dict[str, Any]:
    """Count from ``start`` to ``end`` (``difficulty`` numbers, inclusive; Zhou et al. 2023's
    counting task); ``start`` is uniform in ``[0, max_start)``."""
    if difficulty < 1:
        raise ValueError("length must be >= 1")
    if max_start < 1:
        raise ValueError("max_start must be >= 1")
    start = rng.randrange(max_start)
    end = start + difficulty - 1
    return {
        "start": start, "end": end, "length": difficulty,
        "target": sep.join(str(i) for i in range(start, end + 1)),
    }


@generator("mode", difficulty="string length", fields=("text", "length", "target"))
def mode(
    rng: random.Random, difficulty: int, *, alphabet: str = "abcdef", sep: str = " "
) -> dict[str, Any]:
    """The most frequent symbol of a random string of ``difficulty`` symbols; the string is
    made to have exactly one most frequent symbol (Zhou et al. 2023's mode task).

    When the draw ties, the tied symbol drawn first wins: the last occurrence of each other
    tied symbol is replaced by it, which leaves the winner strictly ahead."""
    s = random_symbols(rng, difficulty, alphabet)
    counts = {c: s.count(c) for c in alphabet}
    top = max(counts.values())
    tied = [c for c in dict.fromkeys(s) if counts[c] == top]
    winner = tied[0]
    for c in tied[1:]:
        last = len(s) - 1 - s[::-1].index(c)
        s[last] = winner
    return {"text": sep.join(s), "length": difficulty, "target": winner}
