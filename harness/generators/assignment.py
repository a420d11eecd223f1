"""Variable-assignment chains (Anil et al. 2022): ``a=5, b=a, c=b`` then "what is c?".

The difficulty is the chain length: the number of assignments between the queried variable and
the literal value (a chain of length 1 is ``a=5``, asking for ``a``).
"""

from __future__ import annotations

import random
import string
from typing import Any

from harness.generators.registry import generator


def variable_names(count: int) -> list[str]:
    """The first ``count`` names of ``a``…``z``, ``aa``, ``ab``, … (in that order)."""
    letters = string.ascii_lowercase
    names = list(letters)
    for first in letters:
        if len(names) >= count:
            break
        names.extend(first + second for second in letters)
    if count > len(names):
        raise ValueError(f"at most {len(names)} variables are supported, asked for {count}")
    return names[:count]


@generator("variable_chain", difficulty="chain length",
           fields=("text", "query", "length", "target", "trace"))
def variable_chain(
    rng: random.Random, difficulty: int, *, distractors: int = 0, max_value: int = 10,
    shuffle: bool = False, sep: str = ", ",
) -> dict[str, Any]:
    """A chain of ``difficulty`` assignments ending in the queried variable.

    ``distractors`` other chains of the same length (each with its own value) are interleaved
    with the queried one; ``shuffle`` puts all statements in random order (else each chain
    reads in dependency order). Values are uniform in ``[0, max_value)``. ``trace`` is the
    lookup written out backwards from the query: ``c=b, b=a, a=5``.
    """
    if difficulty < 1:
        raise ValueError("chain length must be >= 1")
    if distractors < 0 or max_value < 1:
        raise ValueError("distractors must be >= 0 and max_value >= 1")
    n_chains = distractors + 1
    names = variable_names(difficulty * n_chains)
    rng.shuffle(names)
    chains: list[list[str]] = []
    for c in range(n_chains):
        vars_ = names[c * difficulty:(c + 1) * difficulty]
        value = rng.randrange(max_value)
        chains.append([f"{vars_[0]}={value}"] + [
            f"{vars_[i]}={vars_[i - 1]}" for i in range(1, difficulty)
        ])
    if shuffle:
        statements = [s for chain in chains for s in chain]
        rng.shuffle(statements)
    else:  # interleave: step i of every chain, chains in a random order at each step
        statements = []
        for i in range(difficulty):
            order = list(range(n_chains))
            rng.shuffle(order)
            statements.extend(chains[c][i] for c in order)
    query_chain = chains[0]
    query = query_chain[-1].split("=", 1)[0]
    return {
        "text": sep.join(statements), "query": query, "length": difficulty,
        "target": query_chain[0].split("=", 1)[1], "trace": ", ".join(reversed(query_chain)),
    }
