"""Support for the hf backend: ``--model-args`` parsing, device choice, OOM detection and
per-row stopping during batched generation."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from transformers import StoppingCriteria

from harness.errors import HarnessError, ModelLoadError, did_you_mean
from harness.models.support import bad_arg, parse_bool

ACCEPTED_ARGS: tuple[str, ...] = ("dtype", "device", "revision", "trust_remote_code")
ACCEPTED_ARGS += ("max_length", "gguf_file", "add_bos_token")
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


@dataclass(frozen=True)
class HFOptions:
    """Parsed ``--model-args`` of the hf backend."""

    dtype: str = "auto"  # auto: float32 on CPU, the checkpoint's dtype on CUDA
    device: str = "auto"  # auto: cuda if available, else cpu
    revision: str | None = None
    trust_remote_code: bool = False
    max_length: int | None = None  # default: the model's context size, capped at MAX_LENGTH_CAP
    gguf_file: str | None = None
    add_bos_token: bool | None = None  # default: what the tokenizer does

    @classmethod
    def parse(cls, args: dict[str, str]) -> HFOptions:
        """Validate and convert the string arguments."""
        for key in sorted(set(args) - set(ACCEPTED_ARGS)):
            raise HarnessError(
                f"--model-args: unknown key {key!r}{did_you_mean(key, ACCEPTED_ARGS)} for hf; "
                f"accepted: {', '.join(ACCEPTED_ARGS)}"
            )
        dtype, device = args.get("dtype", "auto"), args.get("device", "auto")
        if dtype not in ("auto", *DTYPES):
            raise bad_arg("dtype", f"one of auto, {', '.join(DTYPES)}", dtype)
        if not re.fullmatch(r"auto|cpu|cuda(:\d+)?", device):
            raise bad_arg("device", "cpu, cuda, cuda:N or auto", device)
        max_length = args.get("max_length")
        if max_length is not None and not (max_length.isdigit() and int(max_length) >= 2):
            raise bad_arg("max_length", "an integer >= 2", max_length)
        bos = args.get("add_bos_token")
        return cls(
            dtype=dtype,
            device=device,
            revision=args.get("revision") or None,
            trust_remote_code=parse_bool(
                "trust_remote_code", args.get("trust_remote_code", "false")
            ),
            max_length=int(max_length) if max_length is not None else None,
            gguf_file=args.get("gguf_file") or None,
            add_bos_token=None if bos is None else parse_bool("add_bos_token", bos),
        )


def is_oom(e: BaseException) -> bool:
    oom = getattr(torch, "OutOfMemoryError", torch.cuda.OutOfMemoryError)
    return isinstance(e, oom) or (isinstance(e, RuntimeError) and "out of memory" in str(e).lower())


def resolve_device(device: str) -> str:
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ModelLoadError(f"--model-args device={device}: CUDA is not available")
        index = int(device.partition(":")[2] or 0)
        if index >= torch.cuda.device_count():
            raise ModelLoadError(
                f"--model-args device={device}: only {torch.cuda.device_count()} CUDA device(s)"
            )
    return device


@dataclass
class RowStopper(StoppingCriteria):
    """Marks each row done on its own stop strings, eos, or its own token limit."""

    decode: Callable[[list[int]], str]
    width: int  # prompt width: new tokens start here
    stops: list[list[str]]
    limits: list[int]
    eos: set[int]

    def __post_init__(self) -> None:
        # a stop string ends in the newest token and spans at most ~4 tokens per character
        self.windows = [4 * max(len(s) for s in st) + 8 if st else 1 for st in self.stops]
        self.finished_at: list[int | None] = [None] * len(self.stops)

    def __call__(self, input_ids: Any, scores: Any, **kwargs: Any) -> Any:
        n = input_ids.shape[1] - self.width
        tail = input_ids[:, max(self.width, input_ids.shape[1] - max(self.windows)) :].tolist()
        for i, toks in enumerate(tail):
            if self.finished_at[i] is not None:
                continue
            if (
                n >= self.limits[i]
                or (toks and toks[-1] in self.eos)
                or (
                    self.stops[i]
                    and any(s in self.decode(toks[-self.windows[i] :]) for s in self.stops[i])
                )
            ):
                self.finished_at[i] = n
        return torch.tensor(
            [f is not None for f in self.finished_at], dtype=torch.bool, device=input_ids.device
        )
