"""Passkey retrieval / needle in a haystack (Mohtashami & Jaggi 2023; Hsieh et al. 2024, RULER).

A random pass key is hidden in seeded filler text at a chosen depth; the model is asked for it.
The difficulty is the context length **in the model's own tokens**: the generator gets the
model's token counter (``count_tokens``) and fills the haystack until instruction + haystack +
question reach ``difficulty − reserve`` tokens (``reserve``: room for any further text a
template adds), so the whole prompt is about ``difficulty`` tokens. Without a model
(``harness tasks sample``, scripted models) lengths are approximated as one token per
``CHARS_PER_TOKEN`` characters, about right for English BPE vocabularies.

The needle depth (0.0 = first sentence, 1.0 = last) is a second axis: it is stored in the
record (``depth``) for ``fields.meta`` and the ``effective_length`` analysis. A task sets it
per item through ``source.grid: {depth: [...]}``, so every length × depth cell holds an equal
share of the items (a balanced grid, as RULER and needle-in-a-haystack use); without it the
depth is drawn from ``depths``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

from harness.generators.arithmetic import random_number
from harness.generators.registry import generator

CHARS_PER_TOKEN = 4  # fallback length estimate when no tokenizer is at hand

FILLER = (
    "The grass is green and the sky is blue.",
    "A gentle wind moved through the tall trees.",
    "The river flowed slowly past the old mill.",
    "Children played in the park until the evening.",
    "The baker opened the shop early in the morning.",
    "Clouds drifted over the quiet hills.",
    "A cat slept in the warm sunlight by the window.",
    "The library was calm and smelled of paper.",
    "Fresh bread cooled on the kitchen table.",
    "Birds sang in the hedge beside the road.",
    "The train left the station right on time.",
    "Rain tapped softly on the roof all night.",
    "The market was busy with people buying fruit.",
    "A small boat rocked on the calm lake.",
    "The teacher wrote a long list on the board.",
    "Leaves turned orange and red in the autumn.",
    "The old clock in the hall ticked steadily.",
    "A dog chased a ball across the garden.",
    "Snow covered the mountains in the distance.",
    "The farmer walked along the edge of the field.",
    "Lamps glowed in the windows of the village.",
    "The museum displayed paintings from many places.",
    "Waves rolled onto the sandy beach.",
    "A bicycle leaned against the stone wall.",
    "The soup simmered quietly on the stove.",
    "Students read their books in the courtyard.",
    "The bridge crossed a wide and shallow stream.",
    "Stars appeared one by one after sunset.",
    "The gardener trimmed the roses along the path.",
    "A letter arrived with a colourful stamp.",
)


def approx_tokens(text: str) -> int:
    """Fallback token count: ``ceil(len(text) / CHARS_PER_TOKEN)``."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _counter(count_tokens: Callable[[str], int | None] | None) -> Callable[[str], int]:
    def count(text: str) -> int:
        n = count_tokens(text) if count_tokens is not None else None
        return approx_tokens(text) if n is None else n

    return count


def build_haystack(fillers: Sequence[str], needle: str, depth: float) -> str:
    """Filler sentences with ``needle`` inserted after ``round(depth × len(fillers))`` of them."""
    at = round(depth * len(fillers))
    return " ".join([*fillers[:at], needle, *fillers[at:]])


INSTRUCTION = ("There is an important piece of information hidden inside a lot of irrelevant "
               "text. Find it and memorize it. I will quiz you about it.")
QUESTION = "What is the pass key? The pass key is"


@generator("passkey", difficulty="prompt tokens",
           fields=("instruction", "context", "question", "passkey", "depth", "length",
                   "context_tokens", "prompt_tokens", "window", "window_multiple", "target"),
           needs_tokenizer=True)
def passkey(
    rng: random.Random, difficulty: int, *, window: int = 256,
    depths: Sequence[float] = (0.0, 0.25, 0.5, 0.75, 1.0), depth: float | None = None,
    reserve: int = 0,
    key_digits: int = 5, instruction: str = INSTRUCTION, question: str = QUESTION,
    count_tokens: Callable[[str], int | None] | None = None,
) -> dict[str, Any]:
    """``instruction``, a haystack hiding a ``key_digits``-digit pass key at ``depth`` (default:
    drawn from ``depths``), and ``question``, together (joined by newlines, as the task's
    template is meant to join them) about ``difficulty − reserve`` model tokens and never more
    (except when instruction, needle and question alone are longer: then the haystack is the
    needle alone; ``prompt_tokens`` always holds the measured length); ``window`` is the
    declared training window (recorded as ``window_multiple = difficulty / window``)."""
    if window < 1 or key_digits < 1 or reserve < 0:
        raise ValueError("window and key_digits must be >= 1, reserve >= 0")
    if not depths or any(not 0.0 <= d <= 1.0 for d in depths):
        raise ValueError("depths must be a non-empty list of fractions in [0, 1]")
    if depth is not None and not 0.0 <= depth <= 1.0:
        raise ValueError(f"depth must be a fraction in [0, 1], got {depth!r}")
    count = _counter(count_tokens)
    budget = difficulty - reserve
    key = str(random_number(rng, key_digits)) if key_digits > 1 else str(rng.randrange(10))
    drawn = float(depths[rng.randrange(len(depths))])  # drawn either way: same stream after it
    depth = drawn if depth is None else float(depth)
    needle = f"The pass key is {key}. Remember it. {key} is the pass key."

    def prompt(fillers: Sequence[str]) -> tuple[str, str]:
        context = build_haystack(fillers, needle, depth)
        return context, f"{instruction}\n{context}\n{question}"

    used = count(prompt([])[1])  # when even this exceeds the budget: the needle alone
    fillers: list[str] = []
    pending = FILLER[rng.randrange(len(FILLER))]
    while used + count(" " + pending) <= budget:  # greedy on per-sentence counts ...
        fillers.append(pending)
        used += count(" " + pending)
        pending = FILLER[rng.randrange(len(FILLER))]
    context, text = prompt(fillers)
    tokens = count(text)
    while tokens > budget and fillers:  # ... then corrected on the whole text, both ways
        fillers.pop()
        context, text = prompt(fillers)
        tokens = count(text)
    if count_tokens is None:  # counted by length: each sentence adds its length plus a space
        size = len(text)
        while math.ceil((size + 1 + len(pending)) / CHARS_PER_TOKEN) <= budget:
            fillers.append(pending)
            size += 1 + len(pending)
            pending = FILLER[rng.randrange(len(FILLER))]
        context, text = prompt(fillers)  # the same text the loop below builds, built once
        tokens = count(text)
    while True:
        trial = prompt([*fillers, pending])
        n = count(trial[1])
        if n > budget:
            break
        fillers.append(pending)
        (context, text), tokens = trial, n
        pending = FILLER[rng.randrange(len(FILLER))]
    return {
        "instruction": instruction, "context": context, "question": question, "passkey": key,
        "depth": depth, "length": difficulty, "context_tokens": count(context),
        "prompt_tokens": tokens, "window": window, "window_multiple": difficulty / window,
        "target": key,
    }
