"""What the items themselves allow, and how varied a model's answers are.

A score means something only against what a model could get without solving anything. That
level is not 0 for generation, nor 1/k for every choice task: when most items of a bucket share
one answer (parity's "1", a ladder level whose answers are mostly "1"), always giving that
answer scores the share of those items. So the harness judges every score against the **best
constant answer** of the same items:

- generation: for each of the most frequent targets (at most ``CANDIDATES`` of them), the mean
  of the task's own metric with that target as the answer of every item; the best of them.
  The metric is applied as is (a partial-credit metric gives a constant its partial credit).
- multiple choice: the larger of the mean 1/k (uniform guessing), the share of the most frequent
  gold position (always picking the same place) and the share of the most frequent gold text
  (always picking the same choice where it is offered).

The baseline of a bucket is computed over that bucket's items; the baseline of a role (ID,
OOD) over the role's items pooled, with one constant for all of them, as a model that always
gives one answer would score. Both are computed from the sample records alone (targets, gold
indices, choices), so they are recomputable from the samples files.

The **answer concentration** is the share of the model's most frequent answer (the extracted
answer after stripping; for multiple choice the larger of the most frequent picked position's
and picked text's share). A bucket where one answer makes up at least ``CONSTANT_SHARE`` of at
least ``CONSTANT_MIN_N`` answers is flagged: the model is a constant answerer there, and its
score is the share of the items that answer happens to fit.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.scoring.records import SampleRecord

CANDIDATES = 8  # most frequent targets tried as the constant answer of a generation bucket
CONSTANT_SHARE = 0.9  # a bucket where one answer is at least this share of the answers ...
CONSTANT_MIN_N = 10  # ... of at least this many answers is flagged as answered by a constant

Metric = Callable[[str, str], float]


@dataclass(frozen=True)
class AnswerKey:
    """What the baseline needs of one sample: its target and, for multiple choice, its choices."""

    target: str  # the reference answer (MC: the gold choice's text)
    gold: int | None = None  # MC: the gold choice's position
    k: int = 0  # MC: the number of choices (0 for generation)


@dataclass(frozen=True)
class Answer:
    """What the concentration needs of one sample: the model's answer."""

    text: str  # the extracted answer (MC: the chosen choice's text)
    position: int | None = None  # MC: the chosen choice's position


def constant_baseline(keys: Sequence[AnswerKey], metric: Metric) -> float | None:
    """The mean score of the best constant answer over ``keys`` (None for no items); see
    module."""
    if not keys:
        return None
    n = len(keys)
    if all(k.k > 0 for k in keys):
        uniform = math.fsum(1.0 / k.k for k in keys) / n
        positions = Counter(k.gold for k in keys).most_common(1)[0][1] / n
        texts = Counter(k.target for k in keys).most_common(1)[0][1] / n
        return max(uniform, positions, texts)
    counts = Counter(k.target for k in keys)
    candidates = sorted(counts, key=lambda t: (-counts[t], t))[:CANDIDATES]
    return max(math.fsum(metric(c, k.target) for k in keys) / n for c in candidates)


def concentration(answers: Sequence[Answer]) -> float | None:
    """The share of the most frequent answer (None for no answers); see module."""
    if not answers:
        return None
    n = len(answers)
    share = Counter(a.text.strip() for a in answers).most_common(1)[0][1] / n
    if any(a.position is not None for a in answers):
        share = max(share, Counter(a.position for a in answers).most_common(1)[0][1] / n)
    return share


def is_constant(share: float | None, n: int) -> bool:
    """Whether answers with this concentration, ``n`` of them, come from a constant answerer."""
    return share is not None and n >= CONSTANT_MIN_N and share >= CONSTANT_SHARE


def answer_key(s: SampleRecord) -> AnswerKey:
    """What the baselines need of a sample."""
    if s.choices:
        return AnswerKey(s.target, s.gold_index, len(s.choices))
    return AnswerKey(s.target)


def answer(s: SampleRecord) -> Answer:
    """What the answer concentration needs of a sample."""
    if s.choices:
        return Answer(s.extracted, s.choices.index(s.extracted) if s.extracted in s.choices
                      else None)
    return Answer(s.extracted)
