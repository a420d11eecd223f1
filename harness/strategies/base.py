"""What a prompting strategy is.

To the runner a strategy is a ``Strategy``: prepared items of one task in, scored sample records
out (``direct`` is one, sending each item's prompt once). The multi-call strategies are written as
chains and made ``Strategy``s by ``chained``: a chain turns one ``StrategyInput`` into a Python
generator that yields ``GenerateRequest``s, receives each generated text back, and finally returns
the answer text, which the task's output type scores (chains need an output type whose answers
are generated text: ``OutputType.generates``). ``run_chains`` advances
every item's chain in rounds: round r sends the r-th pending request of every unfinished item to
the model in one batched call, so multi-call strategies keep batching; every call is logged as a
``ModelCall``.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from harness.errors import HarnessError
from harness.items import Instance
from harness.lm import LM
from harness.outputs import output_type
from harness.outputs.generate import call as generate_call
from harness.outputs.prompts import build_prompt
from harness.requests import GenerateRequest
from harness.scoring.prepared import Prepared
from harness.scoring.records import ModelCall, SampleRecord
from harness.spec.task import TaskSpec

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

    def answer_request(self, prompt: str) -> GenerateRequest:
        """A request for an answer in the task's own format (the item's answer budget and the
        task's stop strings)."""
        return output_type(self.spec).answer_request(self.spec, prompt,
                                                     self.prepared.max_tokens)

    @property
    def answer_tokens(self) -> int:
        """The most new tokens of an answer in the task's own format (the item's budget)."""
        return self.prepared.max_tokens or output_type(self.spec).new_tokens(self.spec)


StrategyFn = Callable[[StrategyInput], Chain]
# (spec, task address, prepared items, few-shot pool, model) → one scored record per item
Strategy = Callable[[TaskSpec, str, Sequence[Prepared], Sequence[Instance], LM],
                    list[SampleRecord]]


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
            calls[i].append(generate_call(req, resp.text, resp.n_tokens))
            advance(i, resp.text)
    return [(a if a is not None else "", c) for a, c in zip(answers, calls, strict=True)]


def _inputs(spec: TaskSpec, name: str, prepared: Sequence[Prepared],
            pool: Sequence[Instance]) -> list[StrategyInput]:
    templates = {t.id: t for t in spec.templates}
    by_id = {p.id: p for p in pool}
    params = dict(spec.strategies.get(name, {}))
    out = []
    for p in prepared:
        tpl = templates[p.template]
        shots = [by_id[i] for i in p.fewshot_ids if i in by_id]
        question = build_prompt(spec, tpl, p.item, [])
        context = p.prompt[: -len(question)] if p.prompt.endswith(question) else ""
        out.append(StrategyInput(
            prepared=p, question=question, context=context, exemplars=shots,
            exemplar_questions=[build_prompt(spec, tpl, s, []) for s in shots],
            spec=spec, params=params,
        ))
    return out


@dataclass(frozen=True)
class Chained:
    """The ``Strategy`` that runs a chain over every prepared item and scores the final answers;
    each record's ``calls`` holds all the model calls of its chain, in order. Only for tasks
    whose output type generates its answers."""

    name: str  # the strategy's name (its params: ``strategies.<name>`` in the task file)
    fn: StrategyFn  # the chain

    def check(self, spec: TaskSpec, task: str) -> None:
        """A ``HarnessError`` when ``task`` cannot run under this strategy (run before any model
        loads)."""
        out = output_type(spec)
        if not out.generates:
            raise HarnessError(f"--strategy {self.name}: task {task} is "
                               f"{out.name.replace('_', ' ')}; strategies other than direct need "
                               "generated answers")

    def __call__(self, spec: TaskSpec, task: str, prepared: Sequence[Prepared],
                 pool: Sequence[Instance], model: LM) -> list[SampleRecord]:
        self.check(spec, task)
        out = output_type(spec)
        try:
            results = run_chains(model, _inputs(spec, self.name, prepared, pool), self.fn)
        except ValueError as e:
            raise HarnessError(f"{task}: {e}") from None
        records = []
        for p, (answer, calls) in zip(prepared, results, strict=True):
            records.append(out.score_answer(spec, p, answer, *calls))
        return records


def chained(name: str, fn: StrategyFn) -> Strategy:
    """Chain ``fn`` as the ``Strategy`` called ``name`` (see ``Chained``)."""
    return Chained(name, fn)


def as_strategy(name: str, obj: object) -> Strategy:
    """A chain function (a generator function) as ``chained(name, obj)``; anything else is taken
    to be a ``Strategy`` already."""
    if inspect.isgeneratorfunction(obj):
        return chained(name, cast(StrategyFn, obj))
    return cast(Strategy, obj)
