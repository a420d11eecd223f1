"""Prompting strategies, a run option for any generation task (``harness eval --strategy``).

- ``direct``: one call with the task's prompt (the default; the runner's plain path).
- ``cot``: two-stage chain of thought (reason, then answer).
- ``least_to_most``: decompose, then solve the subproblems in sequence, then the question.
- ``self_ask``: follow-up questions, each answered by its own model call, then the answer.

Each strategy turns one prepared item into a chain of model calls (``harness.strategies.base``);
every call is logged in the sample's ``calls``. Tasks tune a strategy's prompts under
``strategies: {<name>: {...}}`` in their task file.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import HarnessError, did_you_mean
from harness.models.base import LM
from harness.scoring.records import SampleRecord
from harness.scoring.score import Prepared, score_generation
from harness.strategies.base import StrategyFn, StrategyInput, run_chains
from harness.strategies.cot import cot
from harness.strategies.direct import direct
from harness.strategies.least_to_most import least_to_most
from harness.strategies.self_ask import self_ask
from harness.tasks.instances import Instance
from harness.tasks.prompts import build_prompt
from harness.tasks.spec import GenerateOutput, TaskSpec

STRATEGIES: dict[str, StrategyFn] = {
    "direct": direct, "cot": cot, "least_to_most": least_to_most, "self_ask": self_ask,
}

__all__ = ["STRATEGIES", "StrategyInput", "check_strategy", "run_strategy"]


def check_strategy(name: str) -> StrategyFn:
    """The strategy called ``name``; unknown names are a one-line error for ``--strategy``."""
    if name not in STRATEGIES:
        raise HarnessError(f"--strategy: unknown strategy {name!r}" + did_you_mean(name, STRATEGIES)
                           + f" (strategies: {', '.join(STRATEGIES)})")
    return STRATEGIES[name]


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


def run_strategy(name: str, spec: TaskSpec, task: str, prepared: Sequence[Prepared],
                 pool: Sequence[Instance], model: LM) -> list[SampleRecord]:
    """Run strategy ``name`` over every prepared item and score the final answers; each record's
    ``calls`` holds all the model calls of its chain, in order."""
    fn = check_strategy(name)
    if not isinstance(spec.output, GenerateOutput):
        raise HarnessError(f"--strategy {name}: task {task} is multiple choice; "
                           "strategies other than direct need generated answers")
    try:
        results = run_chains(model, _inputs(spec, name, prepared, pool), fn)
    except ValueError as e:
        raise HarnessError(f"{task}: {e}") from None
    records = []
    for p, (answer, calls) in zip(prepared, results, strict=True):
        rec = score_generation(spec, p, answer)
        records.append(rec.model_copy(update={"calls": calls}))
    return records
