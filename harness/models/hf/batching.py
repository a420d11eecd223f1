"""Batching for the hf backend: length-sorted batches, auto batch size (halved on out-of-memory,
capped on CPU by what a batch keeps: the bytes of logits it produces, and for generation its
padded prompt tokens), and per-batch completion callbacks."""

from __future__ import annotations

import gc
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar

import torch

from harness.errors import HarnessError
from harness.models.hf.support import is_oom
from harness.requests import Collator

log = logging.getLogger("harness.models.hf")

AUTO_BATCH_START = 64
CPU_LOGITS_BUDGET = 1 << 30  # bytes of logits per batch when batch_size=auto on CPU
# padded prompt tokens per generation batch when batch_size=auto on CPU: the cap the logits
# budget gave SmolLM2 (49,152-token vocabulary), whose generation batches were measured
# fastest (a flat 64 rows took 3x as long: padding); it does not depend on the vocabulary
CPU_PROMPT_TOKENS = CPU_LOGITS_BUDGET // (4 * 49_152)

Req = TypeVar("Req")
Res = TypeVar("Res")


class BatchingMixin:
    """``_run``: what the hf backend's methods use to batch their rows."""

    _batch_size: int | Literal["auto"]
    _auto_size: int  # the auto batch size that last worked (halved on out-of-memory)
    _vocab: int
    _model: Any

    def _run(
        self,
        items: Sequence[Req],
        length: Callable[[Req], int],
        fn: Callable[[list[Req]], list[Res]],
        on_batch: Callable[[list[int], list[Res]], None] | None = None,
        group: Callable[[Req], object] | None = None,
        kept: Literal["all", "last"] = "all",
    ) -> list[Res]:
        """Run *fn* over batches sorted longest-first; with batch_size=auto, halve on OOM.

        The rows are cut into equal batches of at most the batch size (110 rows at 32: four of
        28 or 27, not 32, 32, 32 and 14: a small batch costs nearly as much as a full one).

        ``group``: items with equal keys are kept next to each other (so a batch holds every
        continuation of a shared context). Auto on CPU also caps a batch at CPU_LOGITS_BUDGET
        bytes of full-vocabulary logits (a CPU out-of-memory kills the process instead of
        raising). ``kept``: whose logits a row keeps, every position's (scoring) or only the
        last one's (greedy generation with ``logits_to_keep``, which is then capped at
        CPU_PROMPT_TOKENS padded prompt tokens instead: a 262,144-token vocabulary would
        otherwise cut generation batches to a few rows).
        """
        if not items:
            return []
        collator = Collator(items, length=length, group_key=group)
        order = list(next(collator.batches(len(items))).indices)
        results: dict[int, Res] = {}
        pos = 0
        while pos < len(order):
            size = self._batch_size if isinstance(self._batch_size, int) else self._auto_size
            if self._batch_size == "auto" and self._model.device.type == "cpu":
                size = min(size, self._cpu_cap(max(1, length(items[order[pos]])), kept))
            # balanced: n rows in ceil(n / size) equal batches, not full ones and a small tail
            left = len(order) - pos
            size = -(-left // -(-left // size))
            idx = order[pos : pos + size]
            try:
                out = fn([items[i] for i in idx])
            except Exception as e:
                if not is_oom(e):
                    raise
                if self._batch_size != "auto" or len(idx) == 1:
                    raise HarnessError(
                        f"out of memory at batch size {len(idx)}; "
                        "use a smaller --batch-size or --model-args max_length"
                    ) from e
                log.warning("out of memory at batch size %d; halving it", len(idx))
                self._auto_size = len(idx) // 2
                out = None
            if out is None:  # free what the failed attempt held, outside the except block
                gc.collect()
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                continue
            results.update(zip(idx, out, strict=True))
            pos += len(idx)
            if on_batch:
                on_batch(idx, out)
        return [results[i] for i in range(len(items))]

    def _cpu_cap(self, longest: int, kept: Literal["all", "last"]) -> int:
        """Most rows of *longest* tokens an auto-sized batch on CPU may hold."""
        row_logits = 4 * self._vocab * (longest if kept == "all" else 1)
        cap = max(1, CPU_LOGITS_BUDGET // row_logits)
        return cap if kept == "all" else min(cap, max(1, CPU_PROMPT_TOKENS // longest))
