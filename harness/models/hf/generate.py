"""Batched generation for the hf backend.

- ``greedy``: a plain decoding loop (temperature 0): prefill with only the last logits kept
  (a prefix every prompt of the batch shares is fed once, see ``hf.prefix``),
  then one token per step from the KV cache, argmax, no logits processors. Each row stops on
  its own (eos, its own token limit, one of its stop strings in the decoded tail, or where its
  answer is settled: ``GenerateRequest.until``, ``models.support.settled``), and rows
  that are done leave the batch (the cache is compacted once enough of them are done, down to
  ``COMPACT_FLOOR`` rows), so a batch costs what its live rows need.
- ``sample``: ``model.generate`` with every decoding knob explicit (temperature > 0), stopping
  each row with ``RowStopper`` (not where its answer settles: ``BoundedLM`` cuts it there).

Both return, per row, the generated token ids up to (not including) eos, cut at the row's limit
and at the step where a stop string appeared; the caller decodes and trims at the stop string.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import transformers
from transformers import StoppingCriteriaList

from harness.models.hf.prefix import SharedPrefix, prefixed_mask
from harness.models.hf.support import RowStopper
from harness.models.support import settled

_hf: Any = transformers
COMPACT_FRACTION = 0.25  # drop finished rows once this share of the batch is done
# ...but keep at least this many rows (finished ones ride along): a matrix product costs about
# the same for any row count up to the BLAS kernel's block, and on CPUs odd counts below it can
# cost more than 16 rows (measured: bench/RESULTS.md)
COMPACT_FLOOR = 16


def _left_padded(prompts: list[list[int]], pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        ids[i, width - len(p) :] = torch.tensor(p, dtype=torch.long)
        mask[i, width - len(p) :] = 1
    return ids, mask


def _window(stops: list[str]) -> int:
    # a stop string ends in the newest token and spans at most ~4 tokens per character
    return 4 * max(len(s) for s in stops) + 8 if stops else 0


@torch.inference_mode()
def greedy(model: Any, prompts: list[list[int]], limits: list[int], stops: list[list[str]],
           eos: set[int], pad: int, decode: Callable[[list[int]], str],
           keep_arg: bool, prefix: SharedPrefix | None = None,
           untils: list[str] | None = None) -> list[list[int]]:
    """Greedy continuation of every prompt (see the module docstring)."""
    device = model.device
    # a prefix every prompt shares runs once; each row keeps at least one token of its own
    shared, cache = prefix.take(prompts, min(len(p) for p in prompts) - 1) if prefix else (0, None)
    ids, mask = _left_padded([p[shared:] for p in prompts], pad)
    pos = (mask.cumsum(-1) - 1).clamp(min=0) + shared
    extra = {"logits_to_keep": 1} if keep_arg else {}
    mask = (prefixed_mask(mask, shared) if shared else mask).to(device)
    res = model(input_ids=ids.to(device), attention_mask=mask, position_ids=pos.to(device),
                past_key_values=cache, use_cache=True, **extra)
    cache = res.past_key_values
    nxt = res.logits[:, -1].argmax(-1)
    last = pos[:, -1].to(device)
    rows = list(range(len(prompts)))  # batch position -> prompt index
    done = [False] * len(rows)
    out: list[list[int]] = [[] for _ in prompts]
    windows = [_window(s) for s in stops]
    while True:
        for b, tok in enumerate(nxt.tolist()):
            if done[b]:
                continue
            k = rows[b]
            if tok in eos:
                done[b] = True
                continue
            out[k].append(tok)
            if len(out[k]) >= limits[k] or (
                stops[k] and any(s in decode(out[k][-windows[k] :]) for s in stops[k])
            ) or (untils is not None and settled(out[k], untils[k], decode)):
                done[b] = True
        alive = [b for b, d in enumerate(done) if not d]
        if not alive:
            return out
        keep = max(len(alive), min(len(rows), COMPACT_FLOOR))
        if len(rows) - keep >= max(1, COMPACT_FRACTION * len(rows)):
            fill = [b for b, d in enumerate(done) if d][: keep - len(alive)]
            sel_rows = sorted(alive + fill)
            sel = torch.tensor(sel_rows, dtype=torch.long, device=device)
            cache.reorder_cache(sel)
            mask, last, nxt = mask[sel], last[sel], nxt[sel]
            rows, done = [rows[b] for b in sel_rows], [done[b] for b in sel_rows]
        mask = torch.cat([mask, mask.new_ones((len(rows), 1))], dim=1)
        last = last + 1
        res = model(input_ids=nxt[:, None], attention_mask=mask, position_ids=last[:, None],
                    past_key_values=cache, use_cache=True)
        nxt = res.logits[:, -1].argmax(-1)


@torch.inference_mode()
def sample(model: Any, prompts: list[list[int]], limits: list[int], stops: list[list[str]],
           eos: set[int], pad: int, decode: Callable[[list[int]], str],
           temperature: float) -> list[list[int]]:
    """``model.generate`` (sampling when ``temperature`` > 0), each row stopped on its own."""
    ids, mask = _left_padded(prompts, pad)
    width = ids.shape[1]
    stopper = RowStopper(decode, width, stops, limits, eos)
    # every decoding knob explicit: the model's generation_config only fills unset ones, and
    # greedy-neutral values keep transformers from warning about sampling flags
    config = _hf.GenerationConfig(
        max_new_tokens=max(limits),
        do_sample=temperature > 0,
        temperature=temperature if temperature > 0 else 1.0,
        top_p=1.0,
        top_k=0 if temperature > 0 else 50,
        typical_p=1.0,
        repetition_penalty=1.0,
        num_beams=1,
        eos_token_id=sorted(eos) or None,
        pad_token_id=pad,
    )
    device = model.device
    seqs = model.generate(
        input_ids=ids.to(device),
        attention_mask=mask.to(device),
        generation_config=config,
        stopping_criteria=StoppingCriteriaList([stopper]),
    )
    out = []
    for i, row in enumerate(seqs[:, width:].tolist()):
        end = stopper.finished_at[i]
        toks = row[: min(limits[i], end if end is not None else len(row))]
        out.append(toks[: next((k for k, t in enumerate(toks) if t in eos), len(toks))])
    return out
