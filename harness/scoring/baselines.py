"""What the items themselves allow, and how varied a model's answers are.

A score means something only against what a model could get without solving anything. That
level is not 0 for generation, nor 1/k for every choice task: when most items of a bucket share
one answer (parity's "1", a ladder level whose answers are mostly "1"), always giving that
answer scores the share of those items. So the harness judges every score against a
**baseline** computed from the same items' answer keys, the larger of two levels:

- **the leave-one-out constant.** The constant answer scored on an item is chosen on the other
  items only, so no item's own answer makes its own constant. Generation: the candidate answers
  are what the metric compares, ``candidate_answer``: the task's ``scoring.extract`` applied to
  each target (MATH: the last ``\\boxed{}`` of the worked solution), the target itself where that
  finds nothing. Every answer at least as frequent as the ``CANDIDATES``-th most frequent one is
  tried (ties all in; at most ``MAX_CANDIDATES``, ``tried``). With ``S_c`` the task's metric
  summed over the items for candidate ``c``, item ``i`` gets the candidate with the largest
  ``S_c - metric(c, t_i)`` among the answers the other items give (one only item ``i`` gives is
  not among them); several tied at the top (within ``TIE``) give the item the mean of their
  scores on it, as a constant answerer picking one of them at random would. Multiple choice:
  three strategies, each chosen on the other items: guessing (1/k), the other items' most
  frequent gold position, their most frequent gold text (ties: the mean over the tied
  values); the item takes the strategy whose share on the other items is largest (tied
  strategies: the mean). Nothing about item ``i`` enters its choice, so its expected score is
  that of a constant chosen on n - 1 items and met by a fresh one: unique targets give 0, a
  uniform gold position 1/k in expectation (``tests/unit/test_baselines.py`` checks both).
- **the guessing level**: multiple choice, the mean 1/k; generation, the mean over items of
  the score of a candidate drawn at random from those the other items give. A guesser
  chooses nothing, so this level has no selection in it. It is there because the leave-one-out
  level, unbiased over draws of the items, swings on a given set of items: where the two most
  frequent answers are nearly tied (a parity bucket of 16 "1" and 15 "0"), every item's own
  answer is the rarer one among the others, and the leave-one-out level falls far below what
  answering "1" every time scores; the floor test (``aggregates.not_above``) would then pass a
  constant answerer. The larger of the two levels keeps that from happening.

One item alone has no others: its leave-one-out constant is guessing (multiple choice) or
nothing (generation, 0). The baseline of a bucket is computed over that bucket's items; the
baseline of a role (ID, OOD) over the role's items pooled, with one constant for all of them,
as a model that always gives one answer would score. Both are computed from the sample records
(targets, gold indices, choices) and the task's ``scoring.extract``, so they are recomputable
from the samples files and results.json. The metric is applied as is (a partial-credit metric
gives a constant its partial credit); its calls are candidates x distinct targets per set of
items, hence the cap.

The **answer concentration** is the share of the model's most frequent answer (the extracted
answer after stripping; for multiple choice the larger of the most frequent picked position's
and picked text's share). A bucket where one answer makes up at least ``CONSTANT_SHARE`` of at
least ``CONSTANT_MIN_N`` answers is flagged: the model is a constant answerer there, and its
score is the share of the items that answer happens to fit.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.answers.budget import looped, lost_to_budget, lost_to_context
from harness.answers.extract import extract_reference
from harness.scoring.records import SampleRecord
from harness.spec.scoring import ExtractSpec

CANDIDATES = 8  # generation: answers at least as frequent as the 8th most frequent are tried ...
MAX_CANDIDATES = 16  # ... at most this many (metric calls: candidates x distinct targets)
TIE = 1e-9  # scores on the other items closer than this are tied
CONSTANT_SHARE = 0.9  # a bucket where one answer is at least this share of the answers ...
CONSTANT_MIN_N = 10  # ... of at least this many answers is flagged as answered by a constant

Metric = Callable[[str, str], float]


@dataclass(frozen=True)
class AnswerKey:
    """What the baseline needs of one sample: its target and, for multiple choice, its choices."""

    target: str  # the reference answer (MC: the gold choice's text)
    gold: int | None = None  # MC: the gold choice's position
    k: int = 0  # MC: the number of choices (0 for generation)


@dataclass(frozen=True, slots=True)
class Answer:
    """What the concentration needs of one sample: the model's answer (and whether the answer
    budget cut it, ``answers/budget``)."""

    text: str  # the extracted answer (MC: the chosen choice's text)
    position: int | None = None  # MC: the chosen choice's position
    cut: bool = False  # the answer stopped on its budget
    lost: bool = False  # ... and may have been right with more room (answers/budget)
    context: bool = False  # ... where the model's context, not the budget, set that room
    looped: bool = False  # it was cut inside a loop (answers/budget): more room, more loop


def constant_baseline(keys: Sequence[AnswerKey], metric: Metric,
                      extract: ExtractSpec | None = None) -> float | None:
    """The baseline of ``keys`` (None for no items): the larger of the guessing level and the
    leave-one-out constant's mean score; ``extract``: the task's ``scoring.extract``, which
    makes the candidate answers (see module)."""
    levels = baseline_levels(keys, metric, extract)
    return None if levels is None else max(levels)


def leave_one_out(keys: Sequence[AnswerKey], metric: Metric,
                  extract: ExtractSpec | None = None) -> float | None:
    """The mean score of the constant answer chosen for each item on the other items alone
    (None for no items); see module."""
    levels = baseline_levels(keys, metric, extract)
    return None if levels is None else levels[1]


def baseline_levels(keys: Sequence[AnswerKey], metric: Metric,
                    extract: ExtractSpec | None = None) -> tuple[float, float] | None:
    """(guessing level, leave-one-out constant level) of ``keys``; None for no items."""
    if not keys:
        return None
    if all(k.k > 0 for k in keys):
        return _choice_levels(keys)
    return _generation_levels(keys, metric, extract)


def candidate_answer(target: str, extract: ExtractSpec | None = None) -> str:
    """The answer that a target stands for as a constant: what ``extract`` takes out of it
    (MATH: its last ``\\boxed{}``), the target itself where that is nothing."""
    if extract is None:
        return target
    found = extract_reference(target, extract)
    return found if found.strip() else target


def tried(counts: Counter[str]) -> list[str]:
    """The candidate answers tried: every answer at least as frequent as the ``CANDIDATES``-th
    most frequent (ties all in), most frequent first; beyond ``MAX_CANDIDATES`` the least
    frequent of them are left out, alphabetically last first."""
    if not counts:
        return []
    least = heapq.nlargest(CANDIDATES, counts.values())[-1]
    return heapq.nsmallest(MAX_CANDIDATES, (a for a in counts if counts[a] >= least),
                           key=lambda a: (-counts[a], a))


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs) if xs else 0.0


def _generation_levels(keys: Sequence[AnswerKey], metric: Metric,
                       extract: ExtractSpec | None) -> tuple[float, float]:
    """Guessing among the candidates the other items give, and the leave-one-out constant.
    Each distinct target is scored once, and only its nonzero scores are kept: a report holds
    nothing per item beyond the count of each distinct target."""
    n = len(keys)
    weight = Counter(k.target for k in keys)
    targets = list(weight)
    owns = []
    for t in targets:
        c = candidate_answer(t, extract)
        owns.append(t if c == t else c)  # the target itself where equal: no copy is kept
    counts = weight
    if any(c is not t for c, t in zip(owns, targets, strict=True)):
        counts = Counter()
        for c, t in zip(owns, targets, strict=True):
            counts[c] += weight[t]
    cands = tried(counts)
    rows = [tuple((j, x) for j, c in enumerate(cands) if (x := metric(c, t))) for t in targets]
    parts: list[list[float]] = [[] for _ in cands]
    for t, row in zip(targets, rows, strict=True):
        for j, x in row:
            parts[j].append(x * weight[t])
    totals = [math.fsum(p) for p in parts]
    position = {c: j for j, c in enumerate(cands)}
    guess: list[float] = []
    loo: list[float] = []
    for t, own, row in zip(targets, owns, rows, strict=True):
        # the answers the other items give: one that only this item gives is not among them
        alone = position.get(own) if counts[own] < 2 else None
        offered = [j for j in range(len(cands)) if j != alone]
        if not offered:  # no other item (a single item): no constant to choose
            continue
        score = dict(row)
        others = [totals[j] - score.get(j, 0.0) for j in offered]
        best = max(others)
        tied = [score.get(j, 0.0) for j, o in zip(offered, others, strict=True)
                if o >= best - TIE]
        for level, xs in ((loo, tied), (guess, [score.get(j, 0.0) for j in offered])):
            if (x := weight[t] * _mean(xs)):
                level.append(x)
    return math.fsum(guess) / n, math.fsum(loo) / n


def _left_out(counts: Counter[object], own: object, n: int) -> tuple[float, float]:
    """For an item whose value is ``own`` among ``counts`` (over all ``n`` items): the share of
    the other items' most frequent value among them, and the item's score when it is answered
    with that value (tied values: the mean)."""
    top = max(counts.values())
    at_top = sum(c == top for c in counts.values())
    if counts[own] < top or at_top > 1:  # the others' most frequent values are not own
        return top / (n - 1), 0.0
    second = max((c for c in counts.values() if c < top), default=0)
    if top - 1 > second:
        return (top - 1) / (n - 1), 1.0
    return (top - 1) / (n - 1), 1.0 / (1 + sum(c == second for c in counts.values()))


def _choice_levels(keys: Sequence[AnswerKey]) -> tuple[float, float]:
    """Uniform guessing, and per item the best on the other items of guessing, the most
    frequent gold position and the most frequent gold text (tied strategies: the mean)."""
    n = len(keys)
    inverse = math.fsum(1.0 / k.k for k in keys)
    if n == 1:
        return inverse, inverse
    golds: Counter[object] = Counter(k.gold for k in keys)
    texts: Counter[object] = Counter(k.target for k in keys)
    loo = []
    for key, w in Counter(keys).items():
        ways = [((inverse - 1.0 / key.k) / (n - 1), 1.0 / key.k),
                _left_out(golds, key.gold, n), _left_out(texts, key.target, n)]
        best = max(share for share, _ in ways)
        loo.append(w * _mean([score for share, score in ways if share >= best - TIE]))
    return inverse / n, math.fsum(loo) / n


def concentration(answers: Sequence[Answer]) -> float | None:
    """The share of the most frequent answer (None for no answers); see module."""
    if not answers:
        return None
    n = len(answers)
    share = Counter(a.text.strip() for a in answers).most_common(1)[0][1] / n
    if any(a.position is not None for a in answers):
        share = max(share, Counter(a.position for a in answers).most_common(1)[0][1] / n)
    return share


def cut_shares(answers: Sequence[Answer]
               ) -> tuple[float | None, float | None, float | None, float | None]:
    """The share of ``answers`` that stopped on their budget, of those lost to it (cut and
    below full marks), of those lost to the model's context instead, and of those cut inside
    a loop (answers/budget); all None for no answers."""
    if not answers:
        return None, None, None, None
    n = len(answers)
    return (sum(a.cut for a in answers) / n, sum(a.lost for a in answers) / n,
            sum(a.context for a in answers) / n, sum(a.looped for a in answers) / n)


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
    return Answer(s.extracted, cut=s.cut,
                  lost=lost_to_budget(s), context=lost_to_context(s), looped=looped(s))
