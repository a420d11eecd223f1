"""Scoring rows (token ids, number of trailing tokens to score) with an HF causal LM.

Three ways, chosen per batch:

- ``plain``: one forward pass per row, right-padded, keeping only the logits from the first
  scored position on (``logits_to_keep``);
- ``shared``: rows whose unscored prefix is the same token sequence (the choices of a
  multiple-choice item share their context) run that prefix once, left-padded, keeping its
  KV cache; the cache is then repeated once per row and only the continuation tokens are fed.
  The first continuation token is scored from the prefix's last logits. Used when it saves at
  least ``SHARE_MIN_SAVING`` of the tokens the plain way would feed (two forward passes and a
  cache copy cost more than a few shared tokens), and when the model takes ``position_ids``
  and returns a cache that can be reordered. The fallback where the trie cannot be used.
- ``trie`` (``hf.tree``, preferred where the model allows it): every distinct token prefix of
  the batch fed once, in one forward pass with a custom attention mask (contexts, the tokens
  choices start with, a template's opening). Used when it saves at least ``TREE_MIN_SAVING``
  of the tokens.

Any way, a token prefix that every row of the batch starts with (shared few-shot exemplars,
an instruction) can be run once first and kept for the next batches (``hf.prefix``).
"""

from __future__ import annotations

from typing import Any

import torch

from harness.models.hf.prefix import SharedPrefix, prefixed_mask
from harness.models.hf.tree import Score, score_trie, trie_size, usable
from harness.models.local import Row

SHARE_MIN_SAVING = 0.3
TREE_MIN_SAVING = 0.1  # one pass, no cache copy: a smaller saving pays


def prefix_key(row: Row) -> tuple[int, ...]:
    """The unscored prefix of a row: rows with the same one can share a forward pass."""
    tokens, n = row
    return tuple(tokens[: len(tokens) - n])


def plan(rows: list[Row], live: list[int]) -> dict[tuple[int, ...], list[int]] | None:
    """Rows grouped by prefix when sharing saves enough tokens, else None."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in live:
        groups.setdefault(prefix_key(rows[i]), []).append(i)
    if len(groups) == len(live):
        return None
    plain = sum(len(rows[i][0]) - 1 for i in live)
    shared = sum(len(k) for k in groups) + sum(rows[i][1] - 1 for i in live)
    return groups if plain - shared >= SHARE_MIN_SAVING * plain else None


@torch.inference_mode()
def score_batch(model: Any, rows: list[Row], pad: int, keep_arg: bool,
                can_share: bool = True, prefix: SharedPrefix | None = None,
                tree: bool = False) -> list[Score]:
    """Score every row (a row with nothing to score gets ``(0.0, True)``).

    ``can_share``: group rows by context (``plan``); ``prefix``: runs a prefix that all rows
    of the batch share once (``hf.prefix``). Both need a model that takes a cache and positions.
    ``tree``: the model takes a custom 4D attention mask (``hf.tree``): with ``can_share``, the
    batch is scored as one token trie when that saves enough.
    """
    live = [i for i, (_, n) in enumerate(rows) if n > 0]
    out: list[Score] = [(0.0, True)] * len(rows)
    if not live:
        return out
    if can_share and tree and usable(model, max(len(rows[i][0]) for i in live)):
        plain = sum(len(rows[i][0]) - 1 for i in live)
        if (plain - trie_size(rows, live) >= TREE_MIN_SAVING * plain
                and score_trie(model, rows, live, pad, keep_arg, out, prefix)):
            return out
    groups = plan(rows, live) if can_share else None
    if groups is not None:
        _shared(model, rows, groups, pad, keep_arg, out, prefix)
    else:
        _plain(model, rows, live, pad, keep_arg, out, prefix)
    return out


def _pick(lp: torch.Tensor, target: list[int]) -> tuple[torch.Tensor, bool]:
    """Sum of ``lp[k, target[k]]`` (float32) and whether every target is the argmax."""
    t = torch.tensor(target, dtype=torch.long, device=lp.device)
    return lp.gather(-1, t[:, None]).sum(), bool((lp.argmax(-1) == t).all())


def _plain(model: Any, rows: list[Row], live: list[int], pad: int, keep_arg: bool,
           out: list[Score], prefix: SharedPrefix | None) -> None:
    seqs = [rows[i][0][:-1] for i in live]
    first = min(len(q) - rows[i][1] for q, i in zip(seqs, live, strict=True))  # first scored pos
    shared, base = prefix.take(seqs, first) if prefix else (0, None)
    lengths = [len(q) - shared for q in seqs]
    width = max(lengths)
    ids = torch.full((len(live), width), pad, dtype=torch.long)
    mask = torch.zeros((len(live), width), dtype=torch.long)
    for j, q in enumerate(seqs):
        ids[j, : lengths[j]] = torch.tensor(q[shared:], dtype=torch.long)
        mask[j, : lengths[j]] = 1
    extra: dict[str, Any] = {"logits_to_keep": width - (first - shared)} if keep_arg else {}
    if shared:
        extra["past_key_values"] = base
        pos = (shared + torch.arange(width)).expand(len(live), -1)
        extra["position_ids"] = pos.to(model.device)
        mask = prefixed_mask(mask, shared)
    device = model.device
    logits = model(input_ids=ids.to(device), attention_mask=mask.to(device), **extra).logits
    offset = width - logits.shape[1]
    for j, i in enumerate(live):
        tokens, n = rows[i]
        lp = logits[j, lengths[j] - n - offset : lengths[j] - offset].float().log_softmax(-1)
        total, greedy = _pick(lp, tokens[-n:])
        out[i] = (float(total), greedy)


def _shared(model: Any, rows: list[Row], groups: dict[tuple[int, ...], list[int]], pad: int,
            keep_arg: bool, out: list[Score], prefix: SharedPrefix | None) -> None:
    device = model.device
    keys = list(groups)
    plen = [len(k) for k in keys]  # >= 1: a scored row always has a token before its targets
    # what every context starts with runs once; each context keeps at least one token
    shared, base = prefix.take([list(k) for k in keys], min(plen) - 1) if prefix else (0, None)
    width = max(plen) - shared
    ids = torch.full((len(keys), width), pad, dtype=torch.long)
    mask = torch.zeros((len(keys), width), dtype=torch.long)
    for g, k in enumerate(keys):
        ids[g, width - plen[g] + shared :] = torch.tensor(k[shared:], dtype=torch.long)
        mask[g, width - plen[g] + shared :] = 1
    pos = (mask.cumsum(-1) - 1).clamp(min=0) + shared
    extra = {"logits_to_keep": 1} if keep_arg else {}
    mask = prefixed_mask(mask, shared) if shared else mask
    first = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                  position_ids=pos.to(device), past_key_values=base, use_cache=True, **extra)
    first_lp = first.logits[:, -1].float().log_softmax(-1)  # predicts each row's first target
    members = [(g, i) for g, k in enumerate(keys) for i in groups[k]]
    conts = [rows[i][0][-rows[i][1] :] for _, i in members]
    rest_w = max(len(c) for c in conts) - 1
    rest: torch.Tensor | None = None
    if rest_w > 0:
        cache = first.past_key_values
        sel = torch.tensor([g for g, _ in members], dtype=torch.long)
        cache.reorder_cache(sel.to(device))  # one copy of the prefix cache per row
        cids = torch.full((len(members), rest_w), pad, dtype=torch.long)
        cmask = torch.zeros((len(members), rest_w), dtype=torch.long)
        for r, c in enumerate(conts):
            cids[r, : len(c) - 1] = torch.tensor(c[:-1], dtype=torch.long)
            cmask[r, : len(c) - 1] = 1
        start = torch.tensor([plen[g] for g, _ in members], dtype=torch.long)
        cpos = start[:, None] + torch.arange(rest_w)[None, :]
        rest = model(input_ids=cids.to(device),
                     attention_mask=torch.cat([mask[sel], cmask], dim=1).to(device),
                     position_ids=cpos.to(device), past_key_values=cache, use_cache=True).logits
    for r, (g, i) in enumerate(members):
        c = conts[r]
        total, greedy = _pick(first_lp[g : g + 1], c[:1])
        if len(c) > 1:
            assert rest is not None
            more, greedy_more = _pick(rest[r, : len(c) - 1].float().log_softmax(-1), c[1:])
            total, greedy = total + more, greedy and greedy_more
        out[i] = (float(total), greedy)
