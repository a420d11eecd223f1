"""Scoring the continuations of shared contexts as one token tree per context (hf backend).

The choices of a multiple-choice item share their context, and often their first tokens too
(" 1234" and " 1243"; " the cat" and " the dog"). Here each context is fed once, followed by
the prefix tree of its continuations: every distinct continuation prefix is one token, placed
at its own position (context length + depth) and allowed by a custom attention mask to see the
context and its ancestors in the tree, nothing else. One forward pass then yields, for every
continuation token, exactly the logits a separate pass over ``context + continuation`` would
(up to float rounding): the first token is predicted from the context's last position, each
later one from the tree node of the tokens before it.

Against the two-pass way (``hf_score._shared``: context pass, KV cache repeated per choice,
continuation pass) this feeds each shared continuation prefix once, skips the cache copy and
makes one model call per batch instead of two. It needs an attention implementation that takes
a 4D mask as is (``sdpa``, ``eager``) and no sliding window shorter than the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from harness.models.hf_prefix import SharedPrefix

Row = tuple[list[int], int]  # token ids, number of tokens at the end to score
Score = tuple[float, bool]  # summed log-probability, every scored token is the argmax

TREE_ATTENTION = ("sdpa", "eager")  # implementations that use a custom 4D mask as given
MASK_BUDGET = 1 << 28  # bytes of attention mask one tree batch may build, else the 2-pass way


@dataclass(frozen=True)
class Tree:
    """The continuations of one context as a prefix tree of fed tokens."""

    tokens: list[int]  # one fed token per distinct continuation prefix (without the last token)
    parents: list[int]  # each node's parent node, -1 for the context's end
    depths: list[int]  # 1 for a continuation's first token, 2 for its second, ...
    sources: list[list[int]]  # per continuation: where each token's prediction is read
    #                           (0: the context's last position, 1 + m: node m)


def build_tree(conts: list[list[int]]) -> Tree:
    """The prefix tree of ``conts`` (each continuation's last token is scored, never fed)."""
    index: dict[tuple[int, ...], int] = {}
    tokens: list[int] = []
    parents: list[int] = []
    depths: list[int] = []
    sources: list[list[int]] = []
    for c in conts:
        src, parent = [0], -1
        for k in range(1, len(c)):
            m = index.get(tuple(c[:k]))
            if m is None:
                m = index[tuple(c[:k])] = len(tokens)
                tokens.append(c[k - 1])
                parents.append(parent)
                depths.append(k)
            src.append(1 + m)
            parent = m
        sources.append(src)
    return Tree(tokens, parents, depths, sources)


def tree_cost(groups: dict[tuple[int, ...], list[int]], rows: list[Row]) -> int:
    """Tokens the tree way feeds: each context once, each continuation prefix once."""
    return sum(len(k) + len(build_tree([_cont(rows[i]) for i in members]).tokens)
               for k, members in groups.items())


def usable(model: Any, width: int) -> bool:
    """Can ``model`` take the tree mask for rows of up to ``width`` tokens?"""
    cfg = model.config
    window = getattr(cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg,
                     "sliding_window", None)
    return (getattr(cfg, "_attn_implementation", None) in TREE_ATTENTION
            and (not isinstance(window, int) or width <= window))


def _cont(row: Row) -> list[int]:
    tokens, n = row
    return tokens[len(tokens) - n :]


@torch.inference_mode()
def score_tree(model: Any, rows: list[Row], groups: dict[tuple[int, ...], list[int]], pad: int,
               keep_arg: bool, out: list[Score], prefix: SharedPrefix | None) -> bool:
    """Score every grouped row into ``out`` in one forward pass; False (nothing done) when
    the mask would exceed ``MASK_BUDGET``."""
    keys = list(groups)
    plen = [len(k) for k in keys]  # >= 1: a scored row always has a token before its targets
    trees = [build_tree([_cont(rows[i]) for i in groups[k]]) for k in keys]
    nodes = max(len(t.tokens) for t in trees)
    eager = getattr(model.config, "_attn_implementation", None) == "eager"
    ctx_w = max(plen)
    if len(keys) * (ctx_w + nodes) ** 2 * (4 if eager else 1) > MASK_BUDGET:
        return False
    # what every context starts with runs once (its cache); each context keeps one token
    shared, base = prefix.take([list(k) for k in keys], min(plen) - 1) if prefix else (0, None)
    ctx_w -= shared
    width = ctx_w + nodes
    ids = torch.full((len(keys), width), pad, dtype=torch.long)
    pos = torch.zeros((len(keys), width), dtype=torch.long)
    allow = torch.zeros((len(keys), width, shared + width), dtype=torch.bool)
    allow[:, :, :shared] = True  # the shared prefix, seen by every real token
    cols = torch.arange(width)
    allow[:, cols, shared + cols] = True  # every position sees itself (padding too: no NaN)
    for g, (k, tree) in enumerate(zip(keys, trees, strict=True)):
        n_ctx = plen[g] - shared
        a = ctx_w - n_ctx  # contexts are left-padded to end together at column ctx_w - 1
        ids[g, a:ctx_w] = torch.tensor(k[shared:], dtype=torch.long)
        pos[g, a:ctx_w] = shared + torch.arange(n_ctx)
        allow[g, a:ctx_w, shared + a : shared + ctx_w] = torch.ones(n_ctx, n_ctx).tril().bool()
        for m, (tok, parent, depth) in enumerate(
            zip(tree.tokens, tree.parents, tree.depths, strict=True)
        ):
            col = ctx_w + m
            ids[g, col], pos[g, col] = tok, plen[g] + depth - 1
            allow[g, col, shared + a : shared + ctx_w] = True  # the whole context
            while parent >= 0:  # and its ancestors in the tree (itself is set above)
                allow[g, col, shared + ctx_w + parent] = True
                parent = tree.parents[parent]
    allow[:, :, :shared] &= _real(ids, ctx_w, plen, shared, trees)[:, :, None]
    mask: torch.Tensor = allow[:, None]
    if eager:  # additive float mask; sdpa takes the boolean one
        mask = torch.zeros(mask.shape, dtype=model.dtype).masked_fill(
            ~mask, torch.finfo(model.dtype).min)
    device = model.device
    extra: dict[str, Any] = {"logits_to_keep": nodes + 1} if keep_arg else {}
    if shared:
        extra.update(past_key_values=base, use_cache=True)
    else:
        extra["use_cache"] = False
    logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                   position_ids=pos.to(device), **extra).logits
    # the context's end, then the nodes; log_softmax as the other ways (logsumexp rounds
    # differently: a few 1e-6 per token, all one way)
    lp = logits[:, logits.shape[1] - (nodes + 1) :].float().log_softmax(-1)
    best = lp.argmax(-1)
    for g, (k, tree) in enumerate(zip(keys, trees, strict=True)):
        for i, src in zip(groups[k], tree.sources, strict=True):
            s = torch.tensor(src, dtype=torch.long, device=lp.device)
            t = torch.tensor(_cont(rows[i]), dtype=torch.long, device=lp.device)
            out[i] = (float(lp[g, s, t].sum()), bool((best[g, s] == t).all()))
    return True


def _real(ids: torch.Tensor, ctx_w: int, plen: list[int], shared: int,
          trees: list[Tree]) -> torch.Tensor:
    """(groups, width) True at the context and tree tokens, False at padding."""
    real = torch.zeros(ids.shape, dtype=torch.bool)
    for g, tree in enumerate(trees):
        real[g, ctx_w - (plen[g] - shared) : ctx_w + len(tree.tokens)] = True
    return real


@torch.inference_mode()
def tree_agrees(model: Any, keep_arg: bool, vocab: int) -> bool:
    """Does ``model`` honour the tree mask? Two continuations that part after their first token
    are scored as a tree and each by its own unmasked pass; a model that ignored the custom
    mask (or the positions) would let one branch see the other. Run once per loaded model."""
    ids = [(31 * k + 7) % vocab for k in range(12)]
    rows: list[Row] = [(ids[:8] + ids[8:11], 3), (ids[:8] + [ids[8], ids[11], ids[9]], 3)]
    got: list[Score] = [(0.0, True)] * 2
    if not score_tree(model, rows, {tuple(ids[:8]): [0, 1]}, 0, keep_arg, got, None):
        return False
    for (tokens, n), (value, _) in zip(rows, got, strict=True):
        x = torch.tensor([tokens[:-1]], dtype=torch.long, device=model.device)
        lp = model(input_ids=x).logits[0, -n:].float().log_softmax(-1)
        want = float(lp.gather(-1, torch.tensor(tokens[-n:], device=lp.device)[:, None]).sum())
        tol = 1e-3 if model.dtype == torch.float32 else 5e-2  # half precision rounds coarser
        if abs(value - want) > tol * (1 + abs(want)):
            return False
    return True
