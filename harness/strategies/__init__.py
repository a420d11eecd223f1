"""Prompting strategies, a run option for any task (``harness eval --strategy``).

- ``direct``: one call with the task's prompt (the default; generation and multiple choice).
- ``cot``: two-stage chain of thought (reason, then answer).
- ``least_to_most``: decompose, then solve the subproblems in sequence, then the question.
- ``self_ask``: follow-up questions, each answered by its own model call, then the answer.

The runner sends every chunk of prepared items through ``run_strategy``; ``STRATEGIES`` is the
one registry. The chain strategies (every one but ``direct``) turn one prepared item into a chain
of model calls (``harness.strategies.base``), generation tasks only; every call is logged in the
sample's ``calls``. Tasks tune a strategy's prompts under ``strategies: {<name>: {...}}`` in
their task file. Adding a strategy: a module with its chain function, and one line here.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import HarnessError, did_you_mean
from harness.models.base import LM
from harness.scoring.records import SampleRecord
from harness.scoring.score import Prepared
from harness.strategies.base import Strategy, StrategyInput, chained
from harness.strategies.cot import cot
from harness.strategies.direct import direct
from harness.strategies.least_to_most import least_to_most
from harness.strategies.self_ask import self_ask
from harness.tasks.instances import Instance
from harness.tasks.spec import TaskSpec

STRATEGIES: dict[str, Strategy] = {
    "direct": direct,
    "cot": chained("cot", cot),
    "least_to_most": chained("least_to_most", least_to_most),
    "self_ask": chained("self_ask", self_ask),
}

__all__ = ["STRATEGIES", "Strategy", "StrategyInput", "check_strategy", "run_strategy"]


def check_strategy(name: str) -> Strategy:
    """The strategy called ``name``; unknown names are a one-line error for ``--strategy``."""
    if name not in STRATEGIES:
        raise HarnessError(f"--strategy: unknown strategy {name!r}" + did_you_mean(name, STRATEGIES)
                           + f" (strategies: {', '.join(STRATEGIES)})")
    return STRATEGIES[name]


def run_strategy(name: str, spec: TaskSpec, task: str, prepared: Sequence[Prepared],
                 pool: Sequence[Instance], model: LM) -> list[SampleRecord]:
    """Score every prepared item of ``task`` under strategy ``name``: one record per item, in
    order, each with the model calls it took."""
    return check_strategy(name)(spec, task, prepared, pool, model)
