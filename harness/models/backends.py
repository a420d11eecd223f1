"""Model backends by prefix: ``hf:NAME`` → the HF transformers backend, and so on.

Backend modules are imported only when a model of that kind is loaded, so importing this
module stays cheap (no torch, no transformers). Third-party backends register an entry point
in the group ``harness.models`` whose name is the prefix and whose object is a factory with
the signature of :data:`BackendFactory` (an ``LM`` subclass taking those arguments works too).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib import metadata
from typing import TYPE_CHECKING, Literal, TypeAlias

from harness import plugins
from harness.errors import HarnessError, ModelLoadError, UnknownNameError, did_you_mean

if TYPE_CHECKING:
    from harness.models.base import LM

BackendFactory: TypeAlias = "Callable[[str, dict[str, str], int | Literal['auto']], LM]"

ENTRY_POINT_GROUP = plugins.MODELS

# Built-in backends: prefix → module that registers it with @backend(prefix) when imported.

_BUILTIN_MODULES: dict[str, str] = {
    "hf": "harness.models.hf.backend",
    "vllm": "harness.models.vllm.backend",
    "openai": "harness.models.openai.backend",
}

_FACTORIES: dict[str, BackendFactory] = {}

# built-in backends whose names may be Hugging Face hub ids (checked by harness.models.hub)
_HUB_BACKENDS = ("hf", "vllm")


def backend(prefix: str) -> Callable[[BackendFactory], BackendFactory]:
    """Register the decorated factory ``(name, model_args, batch_size) -> LM`` under *prefix*."""

    def register(factory: BackendFactory) -> BackendFactory:
        _FACTORIES[prefix] = factory
        return factory

    return register


def _entry_points() -> dict[str, metadata.EntryPoint]:
    return {ep.name: ep for ep in metadata.entry_points(group=ENTRY_POINT_GROUP)}


def available_backends() -> list[str]:
    """Prefixes that ``load_model`` accepts: built-in, registered, and plugin entry points."""
    return sorted(set(_BUILTIN_MODULES) | set(_FACTORIES) | set(_entry_points()))


def _factory(prefix: str) -> BackendFactory:
    if prefix in _FACTORIES:
        return _FACTORIES[prefix]
    if prefix in _BUILTIN_MODULES:
        module = _BUILTIN_MODULES[prefix]
        try:
            importlib.import_module(module)
        except ImportError as e:
            raise ModelLoadError(
                f"--model {prefix}:...: backend needs a package that is not installed ({e}); "
                f"install it with: pip install 'genharness[{prefix}]'"
            ) from e
        if prefix not in _FACTORIES:  # pragma: no cover - a wiring mistake, not a user error
            raise HarnessError(f"--model: module {module} did not register backend {prefix!r}")
        return _FACTORIES[prefix]
    eps = _entry_points()
    if prefix in eps:
        plugins.find(ENTRY_POINT_GROUP, prefix, kind="model backend")  # two providers: error
        plugin = plugins.from_entry_point(ENTRY_POINT_GROUP, eps[prefix])
        try:
            loaded = plugins.load(plugin)
        except plugins.PluginError as e:
            raise ModelLoadError(
                f"--model {prefix}:...: could not load plugin entry point "
                f"{eps[prefix].value!r} of {plugin.dist} ({plugins.failure(plugin)})"
            ) from e
        if not callable(loaded):
            raise ModelLoadError(
                f"--model {prefix}:...: plugin entry point {eps[prefix].value!r} is not callable"
            )
        factory: BackendFactory = loaded
        _FACTORIES[prefix] = factory
        return factory
    known = available_backends()
    raise UnknownNameError(
        f"--model: unknown backend {prefix!r}{did_you_mean(prefix, known)}; "
        f"known backends: {', '.join(known)}"
    )


def split_spec(spec: str) -> tuple[str, str]:
    """Split ``"hf:NAME"`` into ``("hf", "NAME")``; everything after the first colon is the name."""
    prefix, sep, name = spec.partition(":")
    prefix, name = prefix.strip(), name.strip()
    if not sep or not prefix or not name:
        hint = f" (did you mean: hf:{spec.strip()}?)" if spec.strip() and not sep else ""
        raise HarnessError(
            f"--model: expected BACKEND:NAME such as hf:smollm2-135m, got {spec!r}{hint}"
        )
    return prefix, name


def load_model(spec: str, model_args: dict[str, str], batch_size: int | Literal["auto"]) -> LM:
    """Load the model named by *spec* (``"hf:NAME"``) with backend arguments *model_args*."""
    if batch_size != "auto" and (not isinstance(batch_size, int) or batch_size < 1):
        raise HarnessError(
            f"--batch-size: expected a positive integer or 'auto', got {batch_size!r}"
        )
    prefix, name = split_spec(spec)
    if prefix in _HUB_BACKENDS:  # before the backend's imports: an unusable hub fails at once
        from harness.models.hub import check_hub_name

        check_hub_name(name, model_args)
    return _factory(prefix)(name, dict(model_args), batch_size)


def parse_model_args(text: str) -> dict[str, str]:
    """Parse ``"dtype=float32,device=cpu"`` into a dict; empty pieces are ignored."""
    args: dict[str, str] = {}
    for piece in text.split(","):
        if not piece.strip():
            continue
        key, sep, value = piece.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key:
            raise HarnessError(
                f"--model-args: expected KEY=VALUE pairs separated by commas, got {piece.strip()!r}"
            )
        if key in args:
            raise HarnessError(f"--model-args: key {key!r} given twice")
        args[key] = value
    return args
