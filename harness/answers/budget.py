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
"""

from __future__ import annotations

import math
from collections.abc import Callable

BUDGET_PAD = 1  # a token on top of the scaled longest target (the stop string's)
CUT_MATERIAL = 0.05  # share of a bucket's answers lost to the budget that marks the bucket

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


def lost_to_budget(cut: bool, score: float, extracted: str, target: str,
                   context_bound: bool = False) -> bool:
    """Whether a cut answer may have been right with more room: it scored below full marks and
    its extractor found no answer in it, or found the start of the right one (a count cut at
    its 29th number). A wrong answer the model had already given (a boxed value, a finished
    line) is the model's, cut or not. An answer whose budget was what the model's context left
    (``context_bound``) ran out of the model's context: lost to the context, not the budget."""
    if not cut or score >= 1 or context_bound:
        return False
    got = extracted.strip()
    return not got or (got != target.strip() and target.strip().startswith(got))


def lost_to_context(cut: bool, score: float, extracted: str, target: str,
                    context_bound: bool) -> bool:
    """Whether a wrong answer ran out of the model's context: cut where the context, not the
    answer budget, set its room, as ``lost_to_budget`` judges a cut answer."""
    return context_bound and lost_to_budget(cut, score, extracted, target)


def stopped_on_budget(n_tokens: int, max_tokens: int) -> bool:
    """Whether an answer of ``n_tokens`` new tokens used the whole budget of its request."""
    return max_tokens > 0 and n_tokens >= max_tokens
