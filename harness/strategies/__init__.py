"""Prompting strategies, a run option for any task (``harness eval --strategy``).

- ``direct``: one call with the task's prompt (the default; every output type).
- ``cot``: two-stage chain of thought (reason, then answer).
- ``least_to_most``: decompose, then solve the subproblems in sequence, then the question.
- ``self_ask``: follow-up questions, each answered by its own model call, then the answer.

The runner sends every chunk of prepared items through ``run_strategy``; ``STRATEGIES``
(``harness.strategies.registry``) is the one registry, with plugins from the
``harness.strategies`` entry-point group. The chain strategies (every one but ``direct``) turn
one prepared item into a chain of model calls (``harness.strategies.base``), for tasks whose
answers are generated text only; every call is logged in the sample's ``calls``. Tasks tune a
strategy's prompts under ``strategies: {<name>: {...}}`` in their task file. Adding a strategy:
a module in this package with its chain function decorated with ``@strategy("name")``.
"""

from __future__ import annotations

from harness.strategies.base import Strategy, StrategyInput
from harness.strategies.registry import (
    STRATEGIES,
    check_strategy,
    run_strategy,
    strategy,
    strategy_names,
)

__all__ = ["STRATEGIES", "Strategy", "StrategyInput", "check_strategy", "run_strategy",
           "strategy", "strategy_names"]
