"""PCFG SET (Hupkes et al. 2020, "Compositionality decomposed"): items drawn from the official
test files (parallel ``.src`` / ``.tgt`` lines), by number of functions or held-out pair.

An input such as ``reverse copy O14 O4 , C12`` applies string functions (copy, reverse, shift,
echo, swap_first_last, repeat, append, prepend, remove_first, remove_second) to sequences of
symbols; the target is the resulting sequence. The files are read from ``path`` (``$VARS``
expanded; the project's local mirror in tests) or downloaded once from ``url`` and cached.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.generators.registry import generator

_FUNCTION = re.compile(r"[a-z_]+")
# the four function pairs the systematicity test holds out of training (Hupkes et al. 2020, §5)
HELD_OUT_PAIRS = (("swap_first_last", "repeat"), ("append", "remove_second"),
                  ("repeat", "remove_second"), ("append", "swap_first_last"))
FIELDS = ("source", "target", "functions", "held_out_pair")


def count_functions(source: str) -> int:
    """Number of function tokens in a PCFG SET input."""
    return sum(1 for w in source.split() if _FUNCTION.fullmatch(w))


def has_held_out_pair(source: str) -> bool:
    """Whether the input applies one of ``HELD_OUT_PAIRS`` directly (f immediately before g)."""
    w = source.split()
    return any(pair in HELD_OUT_PAIRS for pair in zip(w, w[1:], strict=False))


def _read(path: str, url: str | None, sha256: str | None) -> list[str]:
    from harness.sources.files import exists, fetch_file, read_data, resolve_path, shown

    local = fetch_file(resolve_path(path, Path.cwd()), url, sha256)
    if not exists(local):
        raise ValueError(f"PCFG SET file not found: {shown(local)} (and no url to download it "
                         "from)")
    return read_data(local, "PCFG SET file").splitlines()


@lru_cache(maxsize=8)
def read_pairs(stem: str, url: str | None = None) -> tuple[tuple[str, str], ...]:
    """(source, target) pairs of ``<stem>.src`` / ``<stem>.tgt`` (``url``: the same stem online)."""
    src = _read(stem + ".src", url and url + ".src", None)
    tgt = _read(stem + ".tgt", url and url + ".tgt", None)
    if len(src) != len(tgt):
        raise ValueError(f"{stem}: .src has {len(src)} lines but .tgt has {len(tgt)}")
    return tuple((s.strip(), t.strip()) for s, t in zip(src, tgt, strict=True) if s.strip())


def record(source: str, target: str) -> dict[str, Any]:
    """The fields of one PCFG SET item."""
    return {"source": source, "target": target, "functions": count_functions(source),
            "held_out_pair": int(has_held_out_pair(source))}


@lru_cache(maxsize=64)
def _pool(stem: str, url: str | None, lo: int, hi: int, pairs: str) -> tuple[tuple[str, str], ...]:
    keep = {"any": None, "without": False, "with": True}[pairs]
    return tuple(
        (s, t) for s, t in read_pairs(stem, url)
        if lo <= count_functions(s) <= hi and (keep is None or has_held_out_pair(s) == keep)
    )


def _bin(difficulty: int, bins: Sequence[Sequence[int]] | None) -> tuple[int, int]:
    if bins is None:
        return difficulty, difficulty
    for b in bins:
        if len(b) == 2 and b[0] <= b[1] and b[1] == difficulty:
            return int(b[0]), int(b[1])
    raise ValueError(f"difficulty {difficulty} is not the upper end of any of bins {bins}")


@generator("pcfgset_functions", difficulty="most functions of the bin", fields=FIELDS)
def pcfgset_functions(rng: random.Random, difficulty: int, *, id_stem: str, ood_stem: str,
                      id_max: int = 8, bins: list[list[int]] | None = None,
                      id_url: str | None = None, ood_url: str | None = None) -> dict[str, Any]:
    """Productivity: an item whose number of functions lies in the bin ending at ``difficulty``;
    bins up to ``id_max`` functions come from ``id_stem`` (the base corpus test set), longer
    ones from ``ood_stem`` (the productivity test set: 9-35 functions)."""
    lo, hi = _bin(difficulty, bins)
    if lo <= id_max < hi:
        raise ValueError(f"bin [{lo}, {hi}] straddles id_max={id_max}")
    stem, url = (id_stem, id_url) if hi <= id_max else (ood_stem, ood_url)
    pool = _pool(stem, url, lo, hi, "any")
    if not pool:
        raise ValueError(f"{stem}: no item has {lo}-{hi} functions")
    return record(*rng.choice(pool))


@generator("pcfgset_pairs", difficulty="0: no held-out function pair, 1: one applied",
           fields=FIELDS)
def pcfgset_pairs(rng: random.Random, difficulty: int, *, id_stem: str, ood_stem: str,
                  max_functions: int = 8, id_url: str | None = None,
                  ood_url: str | None = None) -> dict[str, Any]:
    """Systematicity: difficulty 0 draws a base-corpus test item that applies none of the four
    held-out pairs; 1 draws from the systematicity test set (each item applies at least one).
    Both sides are limited to ``max_functions`` functions to keep outputs short."""
    if difficulty not in (0, 1):
        raise ValueError(f"difficulty must be 0 or 1, got {difficulty}")
    stem, url = (id_stem, id_url) if difficulty == 0 else (ood_stem, ood_url)
    pool = _pool(stem, url, 1, max_functions, "without" if difficulty == 0 else "with")
    if not pool:
        raise ValueError(f"{stem}: no item matches")
    return record(*rng.choice(pool))
