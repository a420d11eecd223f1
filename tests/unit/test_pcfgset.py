"""PCFG SET items: checked against an independent interpreter of the functions, with difficulty
control (number of functions, held-out pairs) and determinism."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.generators.pcfgset import (
    count_functions,
    has_held_out_pair,
    pcfgset_functions,
    pcfgset_pairs,
    read_pairs,
)

UNARY = {
    "copy": lambda x: x, "reverse": lambda x: x[::-1], "shift": lambda x: x[1:] + x[:1],
    "echo": lambda x: x + x[-1:],
    "swap_first_last": lambda x: x[-1:] + x[1:-1] + x[:1] if len(x) > 1 else x,
    "repeat": lambda x: x + x,
}
BINARY = {"append": lambda x, y: x + y, "prepend": lambda x, y: y + x,
          "remove_first": lambda x, y: y, "remove_second": lambda x, y: x}


def evaluate(tokens: list[str]) -> list[str]:
    """Prefix-notation interpreter written from the paper's function definitions."""
    pos = 0

    def expr() -> list[str]:
        nonlocal pos
        tok = tokens[pos]
        if tok in UNARY:
            pos += 1
            return list(UNARY[tok](expr()))
        if tok in BINARY:
            pos += 1
            a = expr()
            assert tokens[pos] == ","
            pos += 1
            return list(BINARY[tok](a, expr()))
        out = []
        while pos < len(tokens) and tokens[pos] not in {",", *UNARY, *BINARY}:
            out.append(tokens[pos])
            pos += 1
        return out

    result = expr()
    assert pos == len(tokens)
    return result


def test_interpreter_agrees_with_official_targets(shared_data: Path) -> None:
    for stem in ("pcfgset/test", "productivity/test", "systematicity/test"):
        pairs = read_pairs(str(shared_data / "pcfgset" / stem))
        for src, tgt in pairs[::97]:
            assert " ".join(evaluate(src.split())) == tgt, src


def test_counts_and_pairs() -> None:
    assert count_functions("reverse copy O14 O4 C12 J14 W3") == 2
    assert count_functions("append A1 , remove_second B2 , C3") == 2
    assert has_held_out_pair("swap_first_last repeat A1 B2")
    assert not has_held_out_pair("repeat swap_first_last A1 B2")
    assert has_held_out_pair("append remove_second A B , C , D")


def stems(root: Path) -> dict[str, str]:
    base = root / "pcfgset"
    return {"id_stem": str(base / "pcfgset/test"), "ood_stem": str(base / "productivity/test")}


def test_productivity_generator(shared_data: Path) -> None:
    bins = [[1, 2], [3, 4], [5, 8], [9, 10], [11, 14], [15, 35]]
    for lo, hi in bins:
        for seed in range(15):
            rec = pcfgset_functions(random.Random(seed), hi, bins=bins, **stems(shared_data))
            assert lo <= rec["functions"] <= hi
            assert " ".join(evaluate(rec["source"].split())) == rec["target"]
            again = pcfgset_functions(random.Random(seed), hi, bins=bins, **stems(shared_data))
            assert rec == again
    with pytest.raises(ValueError, match="straddles"):
        pcfgset_functions(random.Random(0), 10, bins=[[7, 10]], **stems(shared_data))


def test_systematicity_generator(shared_data: Path) -> None:
    base = shared_data / "pcfgset"
    kw = {"id_stem": str(base / "pcfgset/test"), "ood_stem": str(base / "systematicity/test")}
    sys_sources = {s for s, _ in read_pairs(kw["ood_stem"])}
    assert all(has_held_out_pair(s) for s in sys_sources)  # the paper's rule holds for the file
    for seed in range(30):
        r0 = pcfgset_pairs(random.Random(seed), 0, **kw)
        r1 = pcfgset_pairs(random.Random(seed), 1, **kw)
        assert r0["held_out_pair"] == 0 and not has_held_out_pair(r0["source"])
        assert r1["held_out_pair"] == 1 and r1["source"] in sys_sources
        assert r0["functions"] <= 8 and r1["functions"] <= 8
