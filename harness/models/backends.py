"""Model backends by prefix: ``hf:NAME`` → the HF transformers backend, and so on (``planted:``,
the planted-truth model, needs no name); and
``load_model``, which loads the model a ``--model`` spec names.

The backends are a :class:`~harness.registry.Registry` like every other pluggable kind. Each
built-in backend's module is imported only when a model of that kind is loaded, so importing
this module stays cheap (no torch, no transformers) and ``hf:`` never imports vLLM. Third-party
backends register an entry point in the group ``harness.models`` whose name is the prefix and
whose object is a factory with the signature of :data:`BackendFactory` (an ``LM`` subclass
taking those arguments works too).
"""

from __future__ import annotations

from collections.abc import Callable  # noqa: F401 (BackendFactory)
from typing import TYPE_CHECKING, Literal, TypeAlias, cast

from harness import plugins
from harness.errors import HarnessError, ModelLoadError, UnknownNameError, did_you_mean
from harness.registry import Registry

if TYPE_CHECKING:
    from harness.lm import LM

BackendFactory: TypeAlias = "Callable[[str, dict[str, str], int | Literal['auto']], LM]"

ENTRY_POINT_GROUP = plugins.MODELS

# Built-in backends: prefix → its factory, imported only when a model of that prefix loads.
# A backend is one module with its factory, plus one line here.
_BUILTIN: dict[str, str] = {
    "hf": "harness.models.hf.backend:create",
    "vllm": "harness.models.vllm.backend:create",
    "openai": "harness.models.openai.backend:create",
    "llamacpp": "harness.models.llamacpp.backend:create",
    "planted": "harness.models.planted.backend:create",
}
# backends whose name may be empty (``planted:``: its curve is in --model-args)
_NAME_OPTIONAL = ("planted",)

# built-in backends whose names may be Hugging Face hub ids (checked by harness.models.hub)
_HUB_BACKENDS = ("hf", "vllm")


class BackendRegistry(Registry[BackendFactory]):
    """The backends by prefix; its errors name ``--model`` as they always have."""

    def unknown_error(self, name: str, known: list[str]) -> HarnessError:
        return UnknownNameError(f"--model: unknown backend {name!r}{did_you_mean(name, known)}; "
                                f"known backends: {', '.join(known)}")

    def missing_dependency_error(self, name: str, e: ImportError) -> HarnessError:
        return ModelLoadError(f"--model {name}:...: backend needs a package that is not "
                              f"installed ({e}); install it with: pip install 'genharness[{name}]'")

    def plugin_error(self, name: str, plugin: plugins.Plugin,
                     e: plugins.PluginError) -> HarnessError:
        return ModelLoadError(f"--model {name}:...: {plugins.failed_message(plugin)}")

    def not_callable_error(self, name: str, plugin: plugins.Plugin) -> HarnessError:
        return ModelLoadError(f"--model {name}:...: plugin entry point {plugin.value!r} is not "
                              "callable")


def _as_factory(name: str, obj: object) -> BackendFactory:
    return cast("BackendFactory", obj)  # the registry checked that it is callable


BACKENDS = BackendRegistry("model backend", ENTRY_POINT_GROUP, entries=_BUILTIN,
                           from_object=_as_factory)


def available_backends() -> list[str]:
    """Prefixes that ``load_model`` accepts: built-in, registered, and plugin entry points."""
    return BACKENDS.names()


def split_spec(spec: str) -> tuple[str, str]:
    """Split ``"hf:NAME"`` into ``("hf", "NAME")``; everything after the first colon is the name
    (which ``planted:`` may leave empty)."""
    prefix, sep, name = spec.partition(":")
    prefix, name = prefix.strip(), name.strip()
    if not sep or not prefix or (not name and prefix not in _NAME_OPTIONAL):
        guess = f"{spec.strip()}:" if spec.strip() in _NAME_OPTIONAL else f"hf:{spec.strip()}"
        hint = f" (did you mean: {guess}?)" if spec.strip() and not sep else ""
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
    model = BACKENDS.get(prefix)(name, dict(model_args), batch_size)
    from harness.lm import LM

    if isinstance(model, LM):  # (a plugin's duck-typed model has no hook)
        model.loaded_as(prefix)  # its identity names the prefix it was invoked under
    return model


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
