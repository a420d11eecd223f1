"""The strategy registry: ``harness eval --strategy NAME`` looks ``NAME`` up here.

Built-in strategies register with ``@strategy("name")`` in the modules of this package;
a plugin declares an entry point named after the strategy in group ``harness.strategies``,
pointing at a chain function (a generator function, see ``harness.strategies.base``) or at a
``Strategy``, or at one its module registers with the decorator on import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness import plugins
from harness.errors import HarnessError
from harness.items import Instance
from harness.lm import LM
from harness.registry import Registry
from harness.scoring.prepared import Prepared
from harness.scoring.records import SampleRecord
from harness.spec.task import TaskSpec
from harness.strategies.base import Strategy, as_strategy


def _registered(name: str, fn: Callable[..., Any]) -> Strategy:
    """What ``@strategy`` registers: the chain of a generator function, or a ``Strategy``."""
    return as_strategy(name, fn)


# the built-ins: every module of this package, each registering its strategies with @strategy
STRATEGIES: Registry[Strategy] = Registry(
    "strategy", plugins.STRATEGIES, package="harness.strategies", from_object=as_strategy,
    list_known=True, plural="strategies",
)

# ``@strategy(name)``: register a chain function (see ``chained``) or a ``Strategy`` as the
# strategy called ``name`` (a name may not be taken twice).
strategy = STRATEGIES.decorator(_registered)


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
