"""The planted-truth backend: ``--model planted:`` (or ``planted:LABEL``), no weights, no network.

It answers each item from that item's own target with a declared response curve
(``planted/curve``: ``d50=D,sigma=S,top=T`` or ``acc=A/B/…``, ``shift``, ``base``), so a run
shows what the harness reports for a model whose fall is known in advance: a check of every
stage (extraction, budgets, baselines, the matched control, the horizon search) against a known
truth, and a task author's power check before any GPU hours are spent (docs/planted.md).

The runner tells it the items it is about to ask (``LM.announce``, one ``AskedItem`` per
prompt; the latest announcement counts); a prompt that is none of them, nor a cot chain built on
one, is refused with one line. For each item it draws once whether it knows the answer
(probability q, from ``derive_seed`` over its seed, the run's seed, the task, item, template and
target, so the ID-exemplar and matched-exemplar answers of an item are paired): a generated
answer is right when it knows (q = the planted accuracy); a multiple-choice item picks the gold
choice when it knows and guesses uniformly otherwise (q chosen so that q + (1 − q)/k is the
planted accuracy), the pick scored highest (−0.5, the others from −2 to −5). How answers are
written: ``planted/answers``. Same seeds, same announcements: the same bytes.

- ``generate``: the answer, cut at the request's stop strings; an answer longer than
  ``max_tokens`` tokens of the planted tokenizer (``planted/tokens``) is cut to that many and
  reports ``n_tokens = max_tokens``, so a budget too small for the answer is visible as one. A
  sampled request (temperature > 0) gets the same answer as a greedy one.
- ``loglikelihood``: a choice of an announced item as above; any other continuation of an
  announced prompt −50.
- ``loglikelihood_rolling``: −1 per token of the planted tokenizer (no language model behind it).
- ``count_tokens``: the planted tokenizer's count; ``context_length``: ``context=`` (32768).

Its identity says ``planted`` and its curve (name and args), and ``harness leaderboard build``
refuses its runs. Under ``--data-parallel`` every worker is told every item. The response cache
keys on the prompt and the model's arguments, not the run's seed: a prompt that comes again
under another ``--seed`` (a dataset item without exemplars) is answered as first drawn, as a
real model would answer it; ``--no-cache`` draws it afresh for each seed.
"""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from harness.errors import HarnessError
from harness.lm import LM, ModelIdentity, OnDone
from harness.models.planted import answers as write
from harness.models.planted.curve import Curve, parse_curve
from harness.models.planted.tokens import load_tokens
from harness.models.support import trim_at_stop
from harness.requests import (
    AskedItem,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    RollingRequest,
)
from harness.seeding import derive_seed

BACKEND = "planted"
CHOSEN_LOGPROB = -0.5  # the picked choice's log-likelihood
OTHER_LOGPROB = (-2.0, 3.0)  # the others': from -2.0 down by up to 3.0
ELSE_LOGPROB = -50.0  # a continuation that is not one of the item's choices


@dataclass(frozen=True)
class Answer:
    """How the planted model answers one announced prompt."""

    good: bool  # it knows the answer (multiple choice: the pick is gold)
    right: str  # the right answer as written
    form: str  # the answer it gives, in the compared form (generation)
    pick: int | None  # multiple choice: the choice it picks


class PlantedLM(LM):
    """The planted-truth model (see module)."""

    def __init__(self, label: str, args: dict[str, str]) -> None:
        self.curve: Curve = parse_curve(args)
        self.tokens = load_tokens(self.curve.tokenizer)
        self._identity = ModelIdentity(backend=BACKEND, name=label or self.curve.describe(),
                                       args=dict(args))
        self._items: dict[str, AskedItem] = {}
        self._lengths: list[int] = []  # distinct announced prompt lengths, longest first
        self._tails: list[int] = []  # lengths of the chain triggers found, latest first
        self._others: dict[tuple[str, str, int], list[str]] = {}
        self._answers: dict[str, Answer] = {}

    @property
    def identity(self) -> ModelIdentity:
        return self._identity

    def announce(self, items: Sequence[AskedItem]) -> None:
        self._items, self._answers = {}, {}
        others: dict[tuple[str, str, int], list[str]] = defaultdict(list)
        for it in items:
            self._items.setdefault(it.prompt, it)
            others[(it.task, it.template, it.bucket_index)].append(it.answer)
        self._others = dict(others)
        self._lengths = sorted({len(p) for p in self._items}, reverse=True)

    def _find(self, prompt: str) -> tuple[AskedItem, str]:
        """The announced item whose prompt ``prompt`` is or extends (the longest), and the
        rest of ``prompt`` after it. A chain's prompt is the item's, a fixed trigger, and (its
        answer call) the planted reasoning and more: the trigger's length, once found, is
        tried first, before the planted reasoning where there is one, so a chunk of chains
        costs one search of every announced prompt length, not one per request."""
        it = self._items.get(prompt)
        if it is not None:
            return it, ""
        mark = prompt.find(write.REASONING)
        head = prompt if mark < 0 else prompt[:mark]
        for t in self._tails:
            if 0 <= t < len(head) and (it := self._items.get(head[:len(head) - t])) is not None:
                return it, prompt[len(head) - t:]
        for n in self._lengths:
            if n < len(prompt) and (it := self._items.get(prompt[:n])) is not None:
                if n <= len(head):
                    self._tails = [len(head) - n, *self._tails[:7]]
                return it, prompt[n:]
        shown = prompt if len(prompt) <= 60 else prompt[:57] + "..."
        raise HarnessError(f"{BACKEND}:{self._identity.name}: the planted model answers only the "
                           "items the runner announced (and the cot strategy's chains on them); "
                           f"this prompt is none of them: {shown!r}")

    def _answer(self, it: AskedItem) -> Answer:
        got = self._answers.get(it.prompt)
        if got is not None:
            return got
        c = self.curve
        u = random.Random(derive_seed(BACKEND, c.seed, it.seed, it.task, it.item, it.template,
                                      it.target)).random()
        rng = random.Random(derive_seed(BACKEND, "answer", c.seed, it.seed, it.task, it.item,
                                        it.template, it.condition, it.target))
        p = c.accuracy(it)
        if it.choices:
            k = len(it.choices)
            q = max(0.0, (p - 1 / k) / (1 - 1 / k)) if k > 1 else 1.0
            pick = it.gold if u < q and it.gold is not None else rng.randrange(k)
            got = Answer(pick == it.gold, it.target, it.choices[pick], pick)
        else:
            right = write.right_text(it)
            good = u < p
            others = self._others.get((it.task, it.template, it.bucket_index), [])
            form = it.answer if good else write.wrong_form(it, right, rng, others)
            got = Answer(good, right, form, None)
        self._answers[it.prompt] = got
        return got

    def _text(self, req: GenerateRequest) -> str:
        it, tail = self._find(req.prompt)
        a = self._answer(it)
        if it.choices:
            raise HarnessError(f"{BACKEND}:{self._identity.name}: item {it.item} of {it.task} is "
                               "multiple choice: the planted model scores its choices, it does "
                               "not generate them")
        if not tail:
            return write.written(it, a.right, a.form)
        if write.REASONING.strip() in tail:  # the cot chain's answer call
            return write.final(it, a.right, a.form, a.good)
        return write.reasoning(it, a.right, a.form)

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        out = []
        for i, req in enumerate(requests):
            text = trim_at_stop(self._text(req), req.stop)
            n = self.tokens.count(text)
            if n > req.max_tokens:  # the budget ends the answer: visible as n = max_tokens
                text, n = self.tokens.head(text, req.max_tokens), req.max_tokens
            res = GenerateResponse(text, n)
            out.append(res)
            if on_done:
                on_done(i, res)
        return out

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        out = []
        for i, req in enumerate(requests):
            it, tail = self._find(req.context)
            conts = [it.choice_prefix + ch for ch in it.choices or ()]
            n = self.tokens.count(req.continuation)
            if tail or req.continuation not in conts:
                res = LoglikelihoodResponse(ELSE_LOGPROB, False, n)
            else:
                j = conts.index(req.continuation)
                pick = self._answer(it).pick
                lo, span = OTHER_LOGPROB
                draw = random.Random(derive_seed(BACKEND, "choice", self.curve.seed, it.seed,
                                                 it.task, it.item, it.condition, j)).random()
                res = LoglikelihoodResponse(CHOSEN_LOGPROB if j == pick else lo - span * draw,
                                            j == pick, n)
            out.append(res)
            if on_done:
                on_done(i, res)
        return out

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        out = []
        for i, req in enumerate(requests):
            out.append(-float(self.tokens.count(req.text)))
            if on_done:
                on_done(i, out[-1])
        return out

    def count_tokens(self, text: str) -> int | None:
        return self.tokens.count(text)

    def context_length(self) -> int | None:
        return self.curve.context


def create(name: str, model_args: dict[str, str], batch_size: int | Literal["auto"]) -> LM:
    """``planted:NAME`` (NAME a label, may be empty) with its ``--model-args``."""
    del batch_size  # it answers every request at once
    return PlantedLM(name, model_args)
