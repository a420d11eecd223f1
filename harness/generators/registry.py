"""Registry of procedural generators: plain typed functions ``(rng, difficulty, **params) -> record``.

A generator must be deterministic for a given ``random.Random`` state: use only ``rng`` (never the
global ``random`` module, time, or hash order). Register one with ``@generator("name", ...)``;
third-party packages expose theirs through the ``harness.generators`` entry-point group.
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.errors import UnknownNameError, did_you_mean

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


_REGISTRY: dict[str, GeneratorInfo] = {}


def generator(
    name: str, *, difficulty: str, fields: tuple[str, ...], needs_tokenizer: bool = False
) -> Callable[[GeneratorFn], GeneratorFn]:
    """Register ``fn`` under ``name`` (decorator; runs once at import time)."""

    def deco(fn: GeneratorFn) -> GeneratorFn:
        if name in _REGISTRY and _REGISTRY[name].fn is not fn:
            raise ValueError(f"generator {name!r} is registered twice")
        _REGISTRY[name] = GeneratorInfo(name, fn, difficulty, fields, needs_tokenizer)
        return fn

    return deco


def _load_builtins() -> None:
    for mod in _BUILTIN_MODULES:
        importlib.import_module(mod)


def get_generator(name: str) -> GeneratorInfo:
    """Look up a generator: built-ins first, then the ``harness.generators`` entry points."""
    _load_builtins()
    if name in _REGISTRY:
        return _REGISTRY[name]
    from harness import plugins

    plugin = plugins.find(plugins.GENERATORS, name, kind="generator")
    if plugin is not None:
        try:
            obj = plugins.load(plugin)  # a module using @generator registers on import
        except plugins.PluginError as e:
            raise plugins.PluginError(f"generator {name!r}: {e}") from e
        if name in _REGISTRY:
            return _REGISTRY[name]
        if not callable(obj):
            raise plugins.PluginError(f"plugin {plugin.label}: {plugin.value} is not callable")
        _REGISTRY[name] = GeneratorInfo(name, obj, "difficulty", ())
        return _REGISTRY[name]
    known = [*_REGISTRY, *(p.name for p in plugins.discover(plugins.GENERATORS))]
    raise UnknownNameError(f"unknown generator {name!r}" + did_you_mean(name, known))


def generator_names() -> list[str]:
    """Names of the built-in generators."""
    _load_builtins()
    return sorted(_REGISTRY)


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
