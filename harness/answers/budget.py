"""Answer budgets in the model's own tokens.

A generation task's ``output.max_tokens`` was a token count tuned on one tokenizer: a model with
another tokenizer, or one that writes out its reasoning at more length, was cut before its
answer ended, and the fall looked like a failure of the model. The budget of a bucket now
follows from its items' targets, counted in the tokenizer of the model being run:

    budget = max(max_tokens, ceil(budget_margin × longest target) + BUDGET_PAD)

(so a bucket whose targets fit the task's ``max_tokens`` keeps it, and its requests, cached
answers and replays, stay as they were)

``max_tokens`` stays a lower limit (never a cut below the target); ``budget_margin`` (task file,
``output.budget_margin``) leaves room for a model that writes its worked solution at more
length than the reference does. Where the model's token counter is unknown (a server without a
tokenize route) a target counts one token per UTF-8 byte: byte-level and byte-fallback
vocabularies never need more, so the estimate errs towards room. Where the model's context is
known, each item's budget is at most what its own prompt, exemplars included, leaves of it
(``RunPlan.room``; a model whose context is shorter than ``max_tokens`` gets what fits), so
no backend cuts a prompt from the left.

An answer that **stopped on the budget** (as many new tokens as the request allowed) is
recorded as ``cut`` in its sample; a cut answer is **lost to the budget** when it scored below
full marks and its extractor found nothing in it, or only the start of the right answer: it
might have been right with more room (``lost_to_budget``). A bucket where lost answers are
at least ``CUT_MATERIAL`` of the answers is marked in the eval table, results.json and the
board, and a gap or horizon that rests on such a bucket says so.

Where the context set an item's room (``Prepared.context_bound``: its prompt leaves less than
the bucket's budget), a cut answer ran out of the **model's context**: the model's own limit at
that length, not the harness's budget. It is **lost to the context** (``lost_to_context``), never
to the budget: no budget would have given it room, so it is not asked again with more, and a
bucket where such answers are at least ``CUT_MATERIAL`` is marked "context-bound" instead.

A cut answer whose extractor found nothing is not lost to the budget either when it was cut
**inside a loop** (``looped``: its end repeats one block of text, a letter or a digit in it, at
least ``LOOP_REPEATS`` times): a greedy model that repeats itself goes on repeating, and more
room only makes the answer longer. Small models do this often, and so do larger ones that give
their answer and go on writing. A bucket reports the share of its answers cut in a loop beside
the cut share.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Protocol

BUDGET_PAD = 1  # a token on top of the scaled longest target (the stop string's)
CUT_MATERIAL = 0.05  # share of a bucket's answers lost to the budget that marks the bucket
LOOP_REPEATS = 3  # an answer ends in a loop when one block repeats this often at its end ...
LOOP_SPAN = 64  # ... over at least this many characters (a short block repeats more) ...
LOOP_TAIL = 4000  # ... within its last this many characters

CountTokens = Callable[[str], "int | None"]


def target_tokens(text: str, count: CountTokens | None) -> int:
    """``text``'s tokens in the model's tokenizer (its UTF-8 bytes where the count is unknown)."""
    n = count(text) if count is not None and text else None
    return len(text.encode("utf-8")) if n is None else n


def answer_budget(floor: int, longest: int, margin: float = 1.0, room: int | None = None) -> int:
    """The answer budget of items whose longest target has ``longest`` tokens (see module):
    ``floor`` is the task's ``max_tokens``, ``margin`` its ``budget_margin``, ``room`` the
    most it may be (the run's cap, or what a context leaves; None: no limit)."""
    budget = max(floor, math.ceil(margin * longest) + BUDGET_PAD if longest else 0)
    return budget if room is None else max(1, min(budget, room))


class Call(Protocol):
    """What the loop verdict reads of one model call of an answer."""

    @property
    def cut(self) -> bool: ...  # it stopped on its budget
    @property
    def output(self) -> str | None: ...  # what the model wrote in it


class Answered(Protocol):
    """What the budget's verdicts read of a scored answer (a ``SampleRecord`` has it)."""

    @property
    def cut(self) -> bool: ...  # it stopped on its budget
    @property
    def score(self) -> float: ...
    @property
    def extracted(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def output(self) -> str: ...  # what the model wrote
    @property
    def context_bound(self) -> bool: ...  # its budget was what the context left
    @property
    def calls(self) -> Sequence[Call]: ...  # its model calls (a chain has several)


def looping(text: str) -> bool:
    """Whether ``text`` ends in a loop: its last ``max(LOOP_REPEATS × p, LOOP_SPAN)`` characters
    repeat one block of ``p`` characters (a partial block at either end included), for some
    ``p`` (checked over the last ``LOOP_TAIL`` characters) that holds a letter or a digit."""
    t = text[-LOOP_TAIL:]
    for p in range(1, len(t) // LOOP_REPEATS + 1):
        span = max(LOOP_REPEATS * p, LOOP_SPAN)
        if span > len(t):
            break
        s = t[-span:]
        if s[p:] == s[:-p] and any(c.isalnum() for c in s[-p:]):
            return True  # (a block of blanks or rule characters may be layout: a table's)
    return False


def looped(a: Answered) -> bool:
    """Whether a cut answer was cut inside a loop (``looping``): greedy decoding that repeats
    itself goes on repeating, so more room would only have made it longer. Each call the budget
    cut (a chain's reasoning, its answer) must have been; an answer with no call recorded is
    judged on its output."""
    if not a.cut:
        return False
    cut = [c.output or "" for c in a.calls if c.cut]
    return all(map(looping, cut)) if cut else looping(a.output)


def lost_to_budget(a: Answered) -> bool:
    """Whether a cut answer may have been right with more room (``_lost``) where the budget,
    not the model's context, set that room."""
    return not a.context_bound and _lost(a)


def lost_to_context(a: Answered) -> bool:
    """Whether a cut answer may have been right with more room (``_lost``) where the model's
    context set it: it ran out of the model's context, the model's own limit."""
    return a.context_bound and _lost(a)


def _lost(a: Answered) -> bool:
    """A cut answer that scored below full marks whose extractor found the start of the right
    answer in it (a count cut at its 29th number), or found no answer while it was not cut
    inside a loop (``looped``). A wrong answer the model had already given (a boxed value, a
    finished line) is the model's, cut or not."""
    if not a.cut or a.score >= 1:
        return False
    got, target = a.extracted.strip(), a.target.strip()
    if got:
        return got != target and target.startswith(got)
    return not looped(a)


def stopped_on_budget(n_tokens: int, max_tokens: int) -> bool:
    """Whether an answer of ``n_tokens`` new tokens used the whole budget of its request."""
    return max_tokens > 0 and n_tokens >= max_tokens
