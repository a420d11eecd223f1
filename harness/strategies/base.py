"""What a prompting strategy is: a chain of model calls for one prepared item.

A strategy turns one ``StrategyInput`` into a Python generator that yields ``GenerateRequest``s,
receives each generated text back, and finally returns the answer text (which the task's
extraction and metric then score). ``run_chains`` advances every item's chain in rounds: round r
sends the r-th pending request of every unfinished item to the model in one batched call, so
multi-call strategies keep batching; every call is logged as a ``ModelCall``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.models.base import LM
from harness.requests import GenerateRequest
from harness.scoring.records import ModelCall
from harness.scoring.score import Prepared
from harness.tasks.instances import Instance
from harness.tasks.spec import GenerateOutput, TaskSpec

Chain = Generator[GenerateRequest, str, str]


@dataclass(frozen=True)
class StrategyInput:
    """Everything a strategy may use for one item."""

    prepared: Prepared  # the item with its direct prompt (exemplars + question) and target
    question: str  # the item's question alone: its template without exemplars
    context: str  # the few-shot part of the prompt before the question ("" when none)
    exemplars: list[Instance]  # the exemplar items, in prompt order
    exemplar_questions: list[str]  # each exemplar's question (template without exemplars)
    spec: TaskSpec  # the task
    params: Mapping[str, Any]  # this strategy's params from the task file (``strategies.<name>``)

    @property
    def output(self) -> GenerateOutput:
        """The task's generation settings (max_tokens, stop)."""
        assert isinstance(self.spec.output, GenerateOutput)
        return self.spec.output

    def answer_request(self, prompt: str) -> GenerateRequest:
        """A request for an answer in the task's own format (its max_tokens and stop)."""
        return GenerateRequest(prompt, self.output.max_tokens, tuple(self.output.stop))


StrategyFn = Callable[[StrategyInput], Chain]


def take_params(inp: StrategyInput, name: str, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """The strategy's params over ``defaults``; an unknown key is a ValueError naming it."""
    unknown = sorted(set(inp.params) - set(defaults))
    if unknown:
        raise ValueError(f"strategies.{name}: unknown key(s) {unknown}; known: {sorted(defaults)}")
    return {**defaults, **inp.params}


def run_chains(model: LM, inputs: Sequence[StrategyInput], fn: StrategyFn,
               ) -> list[tuple[str, list[ModelCall]]]:
    """Run ``fn``'s chain for every input; returns (final answer text, calls) per input."""
    chains = [fn(inp) for inp in inputs]
    answers: list[str | None] = [None] * len(chains)
    calls: list[list[ModelCall]] = [[] for _ in chains]
    pending: dict[int, GenerateRequest] = {}

    def advance(i: int, text: str | None) -> None:
        try:
            pending[i] = next(chains[i]) if text is None else chains[i].send(text)
        except StopIteration as stop:
            answers[i] = str(stop.value)

    for i in range(len(chains)):
        advance(i, None)
    while pending:
        order = sorted(pending)
        reqs = [pending.pop(i) for i in order]
        for i, req, resp in zip(order, reqs, model.generate(reqs), strict=True):
            calls[i].append(ModelCall(kind="generate", prompt=req.prompt, output=resp.text))
            advance(i, resp.text)
    return [(a if a is not None else "", c) for a, c in zip(answers, calls, strict=True)]
