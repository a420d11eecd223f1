"""GGUF to a plain HF checkpoint: dequantizing a model file once and saving it as an fp32 HF
directory, written to a temporary name and renamed, so a killed or concurrent run never leaves a
half-written one; and the transformers helpers that loading takes (quiet progress bars, the
dtype keyword)."""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


@contextlib.contextmanager
def quiet_progress() -> Iterator[None]:
    """Hide transformers' progress bars (weight loading, GGUF conversion) for the duration."""
    import transformers.utils.logging

    hf_logging: Any = transformers.utils.logging
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()


def _remove_stale_tmp(parent: Path, name: str, older_than_s: float = 3600.0) -> None:
    for old in parent.glob(f".{name}.tmp-*"):
        with contextlib.suppress(OSError):
            if time.time() - old.stat().st_mtime > older_than_s:
                shutil.rmtree(old, ignore_errors=True)


def dtype_kwargs(dtype: Any) -> dict[str, Any]:
    """``from_pretrained`` keyword for the dtype (``torch_dtype`` before transformers 4.56)."""
    import transformers

    major, minor = (int(x) for x in transformers.__version__.split(".")[:2])
    return {"dtype" if (major, minor) >= (4, 56) else "torch_dtype": dtype}


def _load_gguf(folder: Path, filename: str) -> tuple[Any, Any]:
    import torch
    import transformers

    hf: Any = transformers
    with quiet_progress():
        tokenizer = hf.AutoTokenizer.from_pretrained(folder, gguf_file=filename)
        model = hf.AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=filename, **dtype_kwargs(torch.float32)
        )
    return model, tokenizer


def convert(source: Path, target: Path, add_bos: bool = False) -> None:
    """Dequantize *source* (GGUF) and save it as an fp32 HF directory at *target*, atomically;
    ``add_bos``: the saved tokenizer puts BOS in front of every text."""
    target.parent.mkdir(parents=True, exist_ok=True)
    _remove_stale_tmp(target.parent, target.name)
    log.info("dequantizing %s into %s (first use only)", source.name, target)
    model, tokenizer = _load_gguf(source.parent, source.name)
    if add_bos:
        tokenizer.add_bos_token = True
    # The model remembers it came from a quantized file; a plain fp32 checkpoint must not.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model.is_quantized = False
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}-{uuid.uuid4().hex[:8]}"
    try:
        with quiet_progress():
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        try:
            os.rename(tmp, target)
        except OSError:
            if not (target / "config.json").is_file():
                raise
            # another run finished first; its directory is as good as ours
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


