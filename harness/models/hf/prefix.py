"""A token prefix that every row of a batch starts with, run once (hf backend).

Prompts of one task often begin the same way: the same few-shot exemplars (``fewshot.shared``),
an instruction, a chat template's system turn. ``common_prefix`` finds the longest token prefix
that all rows of a batch share; ``SharedPrefix`` feeds it to the model once, as a batch of one,
keeps it for the next batches, and repeats its KV cache for every row. The rows' own suffixes
are then fed on top, with the attention mask ``[ones(prefix) | row mask]`` and positions
continuing from the prefix, so each row sees exactly the tokens, positions and mask it would
see unshared (padding sits between the prefix and the suffix, where the mask hides it).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Sequence
from typing import Any

import torch

# Shorter shared prefixes are left in the rows: one more forward pass (and a cache copy) costs
# about what a few shared tokens per row save.
MIN_SHARED = 16


def common_prefix(seqs: Sequence[list[int]], cap: int) -> int:
    """Length of the longest prefix all ``seqs`` share, at most ``cap``; 0 when under
    ``MIN_SHARED`` or when there is only one row (nothing to share)."""
    if len(seqs) < 2 or cap < MIN_SHARED:
        return 0
    # the common prefix of the lexicographically smallest and largest sequences is everyone's
    n = min(len(os.path.commonprefix([min(seqs), max(seqs)])), cap)
    return n if n >= MIN_SHARED else 0


class SharedPrefix:
    """Runs the prefix a batch shares, and keeps its KV cache (one batch row) for the next
    batch: every batch of a task with shared exemplars starts the same way. One per model."""

    def __init__(self, model: Any, keep_arg: bool) -> None:
        self._model = model  # the HF causal LM
        self._keep_arg = keep_arg  # the model takes logits_to_keep
        self._tokens: list[int] = []  # the kept prefix
        self._cache: Any = None  # its KV cache, batch of one

    @torch.inference_mode()
    def take(self, seqs: Sequence[list[int]], cap: int,
             copies: int | None = None) -> tuple[int, Any]:
        """(n, cache): the first ``n`` tokens (at most ``cap``) of every row are already in
        ``cache``, repeated once per row (or ``copies`` times); ``(0, None)`` when the rows
        share too little."""
        n = common_prefix(seqs, cap)
        if not n:
            return 0, None
        kept = len(self._tokens)
        same = len(os.path.commonprefix([self._tokens, seqs[0][:n]]))
        # reuse the kept prefix when the batch shares all of it and not much more; else run a
        # new one, cut back to what it has in common with the kept one when that is most of it
        # (consecutive batches then agree on one prefix)
        if not (kept and same == kept and n - kept < MIN_SHARED):
            n = same if same >= MIN_SHARED and n - same < MIN_SHARED else n
            ids = torch.tensor([seqs[0][:n]], dtype=torch.long, device=self._model.device)
            extra = {"logits_to_keep": 1} if self._keep_arg else {}
            self._cache = self._model(input_ids=ids, use_cache=True, **extra).past_key_values
            self._tokens, kept = list(seqs[0][:n]), n
        cache = copy.deepcopy(self._cache)
        cache.batch_repeat_interleave(copies or len(seqs))
        return kept, cache

    def clear(self) -> None:
        """Drop the kept cache (frees its memory)."""
        self._tokens, self._cache = [], None


def prefixed_mask(mask: torch.Tensor, shared: int) -> torch.Tensor:
    """``mask`` of the rows' suffixes with ``shared`` leading ones (the prefix) in front."""
    return torch.cat([mask.new_ones((mask.shape[0], shared)), mask], dim=1)
