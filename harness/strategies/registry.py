"""The strategy registry: ``harness eval --strategy NAME`` looks ``NAME`` up here.

Built-in strategies register with ``@strategy("name")`` in their modules (``_BUILTIN_MODULES``);
a plugin declares an entry point named after the strategy in group ``harness.strategies``,
pointing at a chain function (a generator function, see ``harness.strategies.base``) or at a
``Strategy``, or at one its module registers with the decorator on import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from harness import plugins
from harness.errors import HarnessError
from harness.models.base import LM
from harness.registry import Registry
from harness.scoring.records import SampleRecord
from harness.scoring.score import Prepared
from harness.strategies.base import Strategy, as_strategy
from harness.tasks.instances import Instance
from harness.tasks.spec import TaskSpec

# modules that register the built-in strategies when imported
_BUILTIN_MODULES: tuple[str, ...] = (
    "harness.strategies.direct", "harness.strategies.cot", "harness.strategies.least_to_most",
    "harness.strategies.self_ask")

STRATEGIES: Registry[Strategy] = Registry(
    "strategy", plugins.STRATEGIES, _BUILTIN_MODULES, from_object=as_strategy, list_known=True,
    plural="strategies",
)

F = TypeVar("F", bound=Callable[..., Any])


def strategy(name: str) -> Callable[[F], F]:
    """Decorator registering a chain function (see ``chained``) or a ``Strategy`` as the strategy
    called ``name`` (a name may not be taken twice)."""

    def register(fn: F) -> F:
        STRATEGIES.add(name, as_strategy(name, fn))
        return fn

    return register


def strategy_names() -> list[str]:
    """Every name ``--strategy`` accepts: built-in, registered, and plugin entry points."""
    return STRATEGIES.names()


def check_strategy(name: str) -> Strategy:
    """The strategy called ``name``; unknown names are a one-line error for ``--strategy``."""
    try:
        return STRATEGIES.get(name)
    except HarnessError as e:  # unknown name, or a plugin that failed to load
        raise HarnessError(f"--strategy: {e}") from None


def run_strategy(name: str, spec: TaskSpec, task: str, prepared: Sequence[Prepared],
                 pool: Sequence[Instance], model: LM) -> list[SampleRecord]:
    """Score every prepared item of ``task`` under strategy ``name``: one record per item, in
    order, each with the model calls it took."""
    return check_strategy(name)(spec, task, prepared, pool, model)
