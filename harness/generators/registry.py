"""Registry of procedural generators: plain typed functions
``(rng, difficulty, **params) -> record``.

A generator must be deterministic for a given ``random.Random`` state: use only ``rng`` (never the
global ``random`` module, time, or hash order). Register one with ``@generator("name", ...)``;
third-party packages expose theirs through the ``harness.generators`` entry-point group.

Work is bounded twice. A generator whose cost grows fast with its parameters registers a
``work`` estimate (about how many basic steps one item takes, from the difficulty and the
parameters): a task asking for more than ``WORK_BUDGET`` steps per item fails when its file
loads. And every item is made under a time budget (``item_seconds()``: ``ITEM_SECONDS``, or
``$GENHARNESS_ITEM_SECONDS``): an item that takes longer fails its task with one line.
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from harness import plugins
from harness.bounds import time_limit
from harness.errors import HarnessError
from harness.registry import Registry

GeneratorFn = Callable[..., dict[str, Any]]
# (the generator's arguments: difficulty and every parameter, defaults filled in) -> (about how
# many basic steps one item takes, the parameter that drives it)
WorkFn = Callable[[Mapping[str, Any]], tuple[float, str]]
WORK_BUDGET = 10_000_000  # basic steps one item may take (about 2 s of Python on a slow core)
ITEM_SECONDS = 10.0  # the longest one item may take to make ($GENHARNESS_ITEM_SECONDS)

@dataclass(frozen=True)
class GeneratorInfo:
    """A registered generator."""

    name: str  # registry name used in task files (source.name)
    fn: GeneratorFn  # (rng: random.Random, difficulty: int, **params) -> record dict
    difficulty: str  # what the difficulty argument means, e.g. "digits per operand"
    fields: tuple[str, ...]  # record fields the generator returns
    needs_tokenizer: bool = False  # gets count_tokens=(text -> int | None) from the model
    needs_slot: bool = False  # gets slot=Slot: draws from a finite pool without replacement
    work: WorkFn | None = None  # the cost estimate of one item (see WORK_BUDGET)


@dataclass(frozen=True)
class Slot:
    """Where an item sits among the items of its bucket that share its difficulty value and
    parameters: for a generator that draws instances of a finite set (a data file's), so that
    one bucket never holds the same instance twice (a repeat would count one answer as two)."""

    seed: int  # shared by those items (run seed, task, stream, bucket, value, parameters)
    index: int  # the item's place among them, from 0

    def pick(self, n: int) -> int:
        """Which of ``n`` instances this item takes: its place in a permutation of
        ``range(n)`` seeded by ``seed``. Distinct for the first ``n`` items; past them the
        permutation starts again (every instance used as often as any other, give or take one)."""
        if n < 1:
            raise ValueError("no instance to draw from")
        return _order(self.seed, n)[self.index % n]


@lru_cache(maxsize=64)
def _order(seed: int, n: int) -> tuple[int, ...]:
    """A seeded permutation of ``range(n)`` (kept: every item of a bucket asks for it)."""
    return tuple(random.Random(seed).sample(range(n), n))


def _from_object(name: str, obj: object) -> GeneratorInfo:
    """A plugin's generator function that no decorator registered."""
    return obj if isinstance(obj, GeneratorInfo) else GeneratorInfo(
        name, obj, "difficulty", ())  # type: ignore[arg-type]


# the built-ins: every module of this package, each registering its generators with @generator
GENERATORS: Registry[GeneratorInfo] = Registry(
    "generator", plugins.GENERATORS, package="harness.generators", from_object=_from_object)

# ``@generator(name, difficulty=..., fields=..., needs_tokenizer=False, needs_slot=False,
# work=None)``: register
# ``fn`` under ``name`` (runs once at import time). ``work``: the generator's cost estimate,
# checked against ``WORK_BUDGET`` when a task file loads; it may raise ``ValueError`` for
# parameters the generator can never satisfy.
generator = GENERATORS.decorator(GeneratorInfo)


def get_generator(name: str) -> GeneratorInfo:
    """Look up a generator: built-ins first, then the ``harness.generators`` entry points."""
    return GENERATORS.get(name)


def generator_names() -> list[str]:
    """Names of the built-in generators."""
    GENERATORS.load_builtins()
    return sorted(GENERATORS.items)


CountTokens = Callable[[str], "int | None"]


def item_seconds() -> float:
    """The per-item time budget: ``$GENHARNESS_ITEM_SECONDS`` when set, else ``ITEM_SECONDS``."""
    raw = os.environ.get("GENHARNESS_ITEM_SECONDS", "").strip()
    if not raw:
        return ITEM_SECONDS
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not value > 0 or value == float("inf"):
        raise HarnessError(f"GENHARNESS_ITEM_SECONDS: expected a positive number of seconds, "
                           f"not {raw!r}")
    return value


class _OverTime(BaseException):
    """An item ran over its time budget (a BaseException: generator code that catches
    ``Exception`` cannot swallow it)."""


def run_generator(
    info: GeneratorInfo, seed: int, difficulty: int, params: dict[str, Any],
    count_tokens: CountTokens | None = None, slot: Slot | None = None,
) -> dict[str, Any]:
    """One record from ``info`` with its own ``random.Random(seed)`` stream, made within the
    per-item time budget (``HarnessError`` past it).

    Generators registered with ``needs_tokenizer`` also get ``count_tokens`` (the model's token
    counter, or None when no model is at hand, e.g. ``harness tasks sample``), those registered
    with ``needs_slot`` get ``slot`` (``Slot``; a lone item: its own seed, place 0)."""
    extra: dict[str, Any] = {"count_tokens": count_tokens} if info.needs_tokenizer else {}
    if info.needs_slot:
        extra["slot"] = slot if slot is not None else Slot(seed, 0)
    seconds = item_seconds()
    try:
        with time_limit(seconds, _OverTime):
            return info.fn(random.Random(seed), difficulty, **params, **extra)
    except _OverTime:
        raise HarnessError(
            f"making one item at difficulty {difficulty} took over {seconds:g} s (the per-item "
            "time budget, $GENHARNESS_ITEM_SECONDS): lower the difficulty or the parameters in "
            "source.params") from None


def estimate_work(info: GeneratorInfo, difficulty: int, params: Mapping[str, Any]
                  ) -> tuple[float, str] | None:
    """``info``'s work estimate for one item at ``difficulty`` with ``params`` (defaults filled
    in), or None when it has none or the parameters do not fit its signature."""
    import inspect

    if info.work is None:
        return None
    try:
        bound = inspect.signature(info.fn).bind_partial(None, difficulty, **params)
    except TypeError:
        return None  # the parameter checks report it
    bound.apply_defaults()
    return info.work(bound.arguments)
