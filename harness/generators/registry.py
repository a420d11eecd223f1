"""Registry of procedural generators: plain typed functions
``(rng, difficulty, **params) -> record``.

A generator must be deterministic for a given ``random.Random`` state: use only ``rng`` (never the
global ``random`` module, time, or hash order). Register one with ``@generator("name", ...)``;
third-party packages expose theirs through the ``harness.generators`` entry-point group.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness import plugins
from harness.registry import Registry

GeneratorFn = Callable[..., dict[str, Any]]

_BUILTIN_MODULES = ("harness.generators.arithmetic", "harness.generators.sequences",
                    "harness.generators.assignment", "harness.generators.passkey",
                    "harness.generators.ladder",
                    "harness.generators.scan", "harness.generators.kb",
                    "harness.generators.pcfgset",
                    "harness.generators.rewriting", "harness.generators.lmentry")


@dataclass(frozen=True)
class GeneratorInfo:
    """A registered generator."""

    name: str  # registry name used in task files (source.name)
    fn: GeneratorFn  # (rng: random.Random, difficulty: int, **params) -> record dict
    difficulty: str  # what the difficulty argument means, e.g. "digits per operand"
    fields: tuple[str, ...]  # record fields the generator returns
    needs_tokenizer: bool = False  # gets count_tokens=(text -> int | None) from the model


GENERATORS: Registry[GeneratorInfo] = Registry(
    "generator", plugins.GENERATORS, _BUILTIN_MODULES,
    from_object=lambda name, fn: GeneratorInfo(name, fn, "difficulty", ()),  # type: ignore[arg-type]
)


def generator(
    name: str, *, difficulty: str, fields: tuple[str, ...], needs_tokenizer: bool = False
) -> Callable[[GeneratorFn], GeneratorFn]:
    """Register ``fn`` under ``name`` (decorator; runs once at import time)."""

    def deco(fn: GeneratorFn) -> GeneratorFn:
        GENERATORS.add(name, GeneratorInfo(name, fn, difficulty, fields, needs_tokenizer),
                       same=lambda a, b: a.fn is b.fn)
        return fn

    return deco


def get_generator(name: str) -> GeneratorInfo:
    """Look up a generator: built-ins first, then the ``harness.generators`` entry points."""
    return GENERATORS.get(name)


def generator_names() -> list[str]:
    """Names of the built-in generators."""
    GENERATORS.load_builtins()
    return sorted(GENERATORS.items)


CountTokens = Callable[[str], "int | None"]


def run_generator(
    info: GeneratorInfo, seed: int, difficulty: int, params: dict[str, Any],
    count_tokens: CountTokens | None = None,
) -> dict[str, Any]:
    """One record from ``info`` with its own ``random.Random(seed)`` stream.

    Generators registered with ``needs_tokenizer`` also get ``count_tokens`` (the model's token
    counter, or None when no model is at hand, e.g. ``harness tasks sample``)."""
    extra = {"count_tokens": count_tokens} if info.needs_tokenizer else {}
    return info.fn(random.Random(seed), difficulty, **params, **extra)
