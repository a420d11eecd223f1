"""Scoring a batch of rows as one token trie in a single forward pass (hf backend).

Rows of a scoring batch often start the same way: the choices of a multiple-choice item share
their context, choices share their first tokens (" 1234" and " 1243"; " the cat" and " the
dog"), and the items of a task share the template's opening ("Question: What is"). Here every
distinct token prefix of the batch is fed once, as one node of a trie, at its own position
(its length - 1) and allowed by a custom attention mask to see its ancestors and itself,
nothing else. One forward pass then yields, for every scored token, exactly the logits a
separate pass over its row would (up to float rounding).

A context is never split between rows. Contexts share a row only when their common opening
saves enough (``_pack``); rows stay near ``PACK_TOKENS`` nodes, so the quadratic attention
stays small, and ancestors a packed row needs are repeated in it. Since
the mask alone says who sees whom, a row's nodes can sit in any order: the nodes whose logits
are read are put last, so ``logits_to_keep`` trims the rest.

Needs an attention implementation that takes a 4D mask as is (``sdpa``, ``eager``), no sliding
window shorter than the rows, and a model that passes ``tree_agrees`` (checked at load).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from harness.models.hf.prefix import SharedPrefix
from harness.models.local import Row

Score = tuple[float, bool]  # summed log-probability, every scored token is the argmax

TREE_ATTENTION = ("sdpa", "eager")  # implementations that use a custom 4D mask as given
MASK_BUDGET = 1 << 28  # bytes of attention mask one batch may build, else the 2-pass way
PACK_TOKENS = 1024  # nodes per packed row, about (unless one context's trie alone is larger)
PACK_MIN_SAVING = 0.1  # contexts share rows when that feeds this share of tokens fewer


@dataclass
class Trie:
    """Distinct token prefixes of some rows; node ``m`` is the prefix of length ``depths[m]``."""

    tokens: list[int] = field(default_factory=list)  # the prefix's last token
    parents: list[int] = field(default_factory=list)  # the node one token shorter, -1 for none
    depths: list[int] = field(default_factory=list)  # the prefix's length (1, 2, ...)
    read: list[bool] = field(default_factory=list)  # its logits are needed (predict a target)
    index: dict[tuple[int, int], int] = field(default_factory=dict)  # (parent, token) -> node

    def add(self, tokens: list[int], n: int) -> list[int]:
        """Add the prefixes of ``tokens`` (all but the whole row); the nodes whose logits
        predict its last ``n`` tokens."""
        parent, sources = -1, []
        for k, tok in enumerate(tokens[:-1], start=1):
            m = self.index.get((parent, tok))
            if m is None:
                m = self.index[(parent, tok)] = len(self.tokens)
                self.tokens.append(tok)
                self.parents.append(parent)
                self.depths.append(k)
                self.read.append(False)
            if k >= len(tokens) - n:
                self.read[m] = True
                sources.append(m)
            parent = m
        return sources


def trie_size(rows: list[Row], live: list[int]) -> int:
    """Tokens the trie way feeds for these rows (one trie, before packing)."""
    trie = Trie()
    for i in live:
        trie.add(rows[i][0], rows[i][1])
    return len(trie.tokens)


def usable(model: Any, width: int) -> bool:
    """Can ``model`` take the trie mask for rows of up to ``width`` tokens?"""
    cfg = model.config
    window = getattr(cfg.get_text_config() if hasattr(cfg, "get_text_config") else cfg,
                     "sliding_window", None)
    return (getattr(cfg, "_attn_implementation", None) in TREE_ATTENTION
            and (not isinstance(window, int) or width <= window))


def _pack(rows: list[Row], live: list[int], shared: int) -> list[tuple[Trie, dict[int, list[int]]]]:
    """Rows (their tokens after the first ``shared``) packed into tries, each with its rows'
    source nodes. The rows of one context stay together. Contexts share packed rows only when
    the batch's own trie saves ``PACK_MIN_SAVING`` over one trie per context (a common
    opening); then into as few rows of about ``PACK_TOKENS`` nodes as hold them, balanced.
    Otherwise one row per context: a wider row costs more per token (attention, padding)."""
    groups: dict[tuple[int, ...], list[int]] = {}
    for i in live:
        tokens, n = rows[i]
        groups.setdefault(tuple(tokens[shared : len(tokens) - n]), []).append(i)
    cut = [(rows[i][0][shared:], rows[i][1]) for i in live]
    sizes = [trie_size([(rows[i][0][shared:], rows[i][1]) for i in g], list(range(len(g))))
             for g in groups.values()]
    whole = trie_size(cut, list(range(len(cut))))
    if sum(sizes) - whole >= PACK_MIN_SAVING * sum(sizes):
        n_packs = -(-whole // max(PACK_TOKENS, *sizes))
    else:
        n_packs = len(groups)
    packs: list[tuple[Trie, dict[int, list[int]]]] = [(Trie(), {}) for _ in range(n_packs)]
    load = [0] * n_packs
    for members, size in sorted(zip(groups.values(), sizes, strict=True), key=lambda g: -g[1]):
        k = load.index(min(load))  # the emptiest row takes the next largest context
        load[k] += size
        trie, sources = packs[k]
        for i in members:
            sources[i] = trie.add(rows[i][0][shared:], rows[i][1])
    return packs


@torch.inference_mode()
def score_trie(model: Any, rows: list[Row], live: list[int], pad: int, keep_arg: bool,
               out: list[Score], prefix: SharedPrefix | None) -> bool:
    """Score the ``live`` rows into ``out`` in one forward pass; False (nothing done) when the
    mask would exceed ``MASK_BUDGET``."""
    # what every row starts with may already be cached (hf.prefix); each row keeps the token
    # that predicts its first target
    cap = min(len(rows[i][0]) - rows[i][1] for i in live) - 1
    packs = _pack(rows, live, 0)
    width = max(len(t.tokens) for t, _ in packs)
    eager = getattr(model.config, "_attn_implementation", None) == "eager"
    if len(packs) * width * width * (4 if eager else 1) > MASK_BUDGET:
        return False
    # (distinct contexts: a batch of one context gains nothing from a pass of its own)
    contexts = list({tuple(t[: len(t) - n]) for t, n in (rows[i] for i in live)})
    shared, base = (prefix.take([list(c) for c in contexts], cap, copies=1) if prefix
                    else (0, None))
    if shared:
        assert base is not None
        packs = _pack(rows, live, shared)
        width = max(len(t.tokens) for t, _ in packs)
        base.batch_repeat_interleave(len(packs))
    tail = max(sum(t.read) for t, _ in packs)
    ids = torch.full((len(packs), width), pad, dtype=torch.long)
    pos = torch.zeros((len(packs), width), dtype=torch.long)
    allow = torch.zeros((len(packs), width, shared + width), dtype=torch.bool)
    cols = torch.arange(width)
    allow[:, cols, shared + cols] = True  # every column sees itself (padding too: no NaN)
    where: list[list[int]] = []  # per pack: node -> column
    for r, (trie, _) in enumerate(packs):
        n = len(trie.tokens)
        # nodes whose logits are read go last (``logits_to_keep``), the others first
        order = [m for m in range(n) if not trie.read[m]] + [m for m in range(n) if trie.read[m]]
        col = [0] * n
        for c, m in enumerate(order):
            col[m] = c if not trie.read[m] else width - n + c
        anc = torch.zeros((n, n), dtype=torch.bool)  # anc[m, a]: a is m or an ancestor of m
        for m in range(n):  # parents come before their children
            if trie.parents[m] >= 0:
                anc[m] = anc[trie.parents[m]]
            anc[m, m] = True
        c_t = torch.tensor(col, dtype=torch.long)
        ids[r, c_t] = torch.tensor(trie.tokens, dtype=torch.long)
        pos[r, c_t] = shared + torch.tensor(trie.depths, dtype=torch.long) - 1
        block = allow[r, :, shared:]
        block[c_t[:, None], c_t[None, :]] = anc
        allow[r, c_t, :shared] = True  # the cached prefix, seen by every node
        where.append(col)
    mask: torch.Tensor = allow[:, None]
    if eager:  # additive float mask; sdpa takes the boolean one
        mask = torch.zeros(mask.shape, dtype=model.dtype).masked_fill(
            ~mask, torch.finfo(model.dtype).min)
    device = model.device
    extra: dict[str, Any] = {"logits_to_keep": tail} if keep_arg else {}
    if shared:
        extra.update(past_key_values=base, use_cache=True)
    else:
        extra["use_cache"] = False
    logits = model(input_ids=ids.to(device), attention_mask=mask.to(device),
                   position_ids=pos.to(device), **extra).logits
    # log_softmax as the other ways (logsumexp rounds differently: a few 1e-6 per token)
    lp = logits[:, logits.shape[1] - tail :].float().log_softmax(-1)
    best = lp.argmax(-1)
    for r, (_, sources) in enumerate(packs):
        for i, nodes in sources.items():
            tokens, n = rows[i]
            s = torch.tensor([where[r][m] - (width - tail) for m in nodes], device=lp.device)
            t = torch.tensor(tokens[len(tokens) - n :], dtype=torch.long, device=lp.device)
            out[i] = (float(lp[r, s, t].sum()), bool((best[r, s] == t).all()))
    return True


@torch.inference_mode()
def tree_agrees(model: Any, keep_arg: bool, vocab: int) -> bool:
    """Does ``model`` honour the trie mask? Two rows that part after their ninth token are
    scored as a trie and each by its own unmasked pass; a model that ignored the custom mask
    (or the positions) would let one branch see the other. Run once per loaded model."""
    ids = [(31 * k + 7) % vocab for k in range(12)]
    rows: list[Row] = [(ids[:8] + ids[8:11], 3), (ids[:8] + [ids[8], ids[11], ids[9]], 3)]
    got: list[Score] = [(0.0, True)] * 2
    if not score_trie(model, rows, [0, 1], 0, keep_arg, got, None):
        return False
    for (tokens, n), (value, _) in zip(rows, got, strict=True):
        x = torch.tensor([tokens[:-1]], dtype=torch.long, device=model.device)
        lp = model(input_ids=x).logits[0, -n:].float().log_softmax(-1)
        want = float(lp.gather(-1, torch.tensor(tokens[-n:], device=lp.device)[:, None]).sum())
        tol = 1e-3 if model.dtype == torch.float32 else 5e-2  # half precision rounds coarser
        if abs(value - want) > tol * (1 + abs(want)):
            return False
    return True
