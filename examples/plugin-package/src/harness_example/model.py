"""``example:rules``: a tiny rule-based "model" for the ``mybench/digitsum`` task.

It reads the last list of digits in the prompt and answers with its sum when the list has at
most ``capacity`` digits (``--model-args capacity=N``, default 6), and with the sum plus one
beyond: a model that generalizes a little past its training range (5 digits) and then fails.

A backend is a factory ``(name, model_args, batch_size) -> LM``; the ``harness.models`` entry
point's name is the ``--model`` prefix. ``LM`` is the harness's model contract: three batched
methods and an identity that goes into results.json.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal, TypeVar

from harness.api import (
    LM,
    GenerateRequest,
    GenerateResponse,
    LoglikelihoodRequest,
    LoglikelihoodResponse,
    ModelIdentity,
    ModelLoadError,
    OnDone,
    RollingRequest,
)

R = TypeVar("R")
_LIST = re.compile(r"[Dd]igits:? ((?:\d )*\d)")


class RuleModel(LM):
    """Sums digit lists correctly up to ``capacity`` digits, off by one beyond."""

    def __init__(self, capacity: int, model_args: dict[str, str]) -> None:
        self.capacity = capacity
        self._args = dict(model_args)

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend="example", name="rules", args=self._args)

    def answer(self, prompt: str) -> str:
        """The reply to one prompt (" <sum>", or "" when the prompt holds no digit list)."""
        lists = _LIST.findall(prompt)
        if not lists:
            return ""
        digits = [int(d) for d in lists[-1].split()]  # the question comes after the exemplars
        total = sum(digits)
        return f" {total if len(digits) <= self.capacity else total + 1}"

    def generate(
        self, requests: Sequence[GenerateRequest], on_done: OnDone[GenerateResponse] | None = None
    ) -> list[GenerateResponse]:
        out = [GenerateResponse(text=self.answer(r.prompt), n_tokens=1) for r in requests]
        return _report(out, on_done)

    def loglikelihood(
        self,
        requests: Sequence[LoglikelihoodRequest],
        on_done: OnDone[LoglikelihoodResponse] | None = None,
    ) -> list[LoglikelihoodResponse]:
        """Prefers the continuation that equals its own answer (0.0), else -1.0 per character."""
        out = []
        for r in requests:
            hit = r.continuation.strip() == self.answer(r.context).strip()
            out.append(LoglikelihoodResponse(0.0 if hit else -float(len(r.continuation) or 1),
                                             hit, 1))
        return _report(out, on_done)

    def loglikelihood_rolling(
        self, requests: Sequence[RollingRequest], on_done: OnDone[float] | None = None
    ) -> list[float]:
        return _report([-float(len(r.text)) for r in requests], on_done)


def _report(responses: list[R], on_done: OnDone[R] | None) -> list[R]:
    """Hand each response to ``on_done`` (index, response): the harness caches finished work
    as it arrives, so an interrupted run resumes. A real backend calls it per finished batch."""
    if on_done is not None:
        for i, res in enumerate(responses):
            on_done(i, res)
    return responses


def make_model(name: str, model_args: dict[str, str],
               batch_size: int | Literal["auto"]) -> LM:
    """The ``example:`` backend factory: ``example:rules`` with optional ``capacity=N``."""
    if name != "rules":
        raise ModelLoadError(
            f"--model example:{name}: unknown model; the only one is example:rules"
        )
    unknown = sorted(set(model_args) - {"capacity"})
    if unknown:
        raise ModelLoadError(f"--model-args: example:rules takes only capacity=N, got {unknown}")
    try:
        capacity = int(model_args.get("capacity", "6"))
    except ValueError:
        raise ModelLoadError("--model-args: capacity must be an integer") from None
    return RuleModel(capacity, model_args)
