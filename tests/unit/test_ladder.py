"""The complexity-ladder generator: determinism, level/variant control, and answers checked by an
independent implementation (counting by dynamic programming / hashing, not by enumeration)."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from harness.generators.ladder import OOD_OFFSET, decode, ladder
from harness.generators.registry import get_generator, run_generator
from harness.items import build_instances
from harness.tasks.loader import load_spec

TASKS = Path(__file__).resolve().parents[2] / "tasks" / "easy2hard"


def pairs_summing(values: list[int], t: int) -> int:
    seen: Counter[int] = Counter()
    count = 0
    for v in values:  # one pass with a hash of earlier values
        count += seen[t - v]
        seen[v] += 1
    return count


def triples_summing(values: list[int], t: int) -> int:
    return sum(pairs_summing(values[i + 1:], t - v) for i, v in enumerate(values))


def subsets_summing(values: list[int], t: int) -> int:
    ways: Counter[int] = Counter({0: 1})  # subset-sum DP over the values
    for v in values:
        nxt = Counter(ways)
        for s, c in ways.items():
            nxt[s + v] += c
        ways = nxt
    return ways[t] - (1 if t == 0 else 0)  # drop the empty subset


def expected(rec: dict[str, object]) -> str:
    values = rec["values"]
    assert isinstance(values, list)
    level, t = rec["level"], rec["total"]
    if level == 1:
        return str(max(values))
    if level == 2:
        return " ".join(map(str, sorted(values)))
    assert isinstance(t, int)
    fn = {3: pairs_summing, 4: triples_summing, 5: subsets_summing}[int(str(level))]
    return str(fn(values, t))


@pytest.mark.parametrize("shift", ["range", "length", "sign"])
def test_answers_match_an_independent_solver(shift: str) -> None:
    info = get_generator("ladder")
    for d in [*range(1, 6), *range(OOD_OFFSET + 1, OOD_OFFSET + 6)]:
        for i in range(40):
            rec = run_generator(info, 1000 * d + i, d, {"shift": shift})
            assert rec["target"] == expected(rec), rec
            if rec["level"] >= 3:
                assert int(rec["target"]) >= 1  # the target sum is always reachable
            assert rec["list"] == " ".join(map(str, rec["values"]))
            assert str(rec["total"]) in rec["instruction"] or rec["total"] is None


def test_level_and_variant_control() -> None:
    rng = random.Random(0)
    for d in range(1, 6):
        for shift in ("range", "length", "sign"):
            id_rec = ladder(rng, d, shift=shift, n=5, ood_n=8)
            ood_rec = ladder(rng, d + OOD_OFFSET, shift=shift, n=5, ood_n=8)
            assert (id_rec["level"], id_rec["variant"]) == (d, "id")
            assert (ood_rec["level"], ood_rec["variant"]) == (d, "ood")
            assert len(id_rec["values"]) == 5 and all(1 <= v <= 9 for v in id_rec["values"])
            ood = ood_rec["values"]
            if shift == "range":
                assert len(ood) == 5 and all(10 <= v <= 99 for v in ood)
            elif shift == "length":
                assert len(ood) == 8 and all(1 <= v <= 9 for v in ood)
            else:
                assert len(ood) == 5 and all(1 <= abs(v) <= 9 for v in ood)
    many = [ladder(random.Random(s), 11, shift="sign")["values"] for s in range(50)]
    assert any(v < 0 for vals in many for v in vals)  # the sign shift really brings negatives


def test_deterministic_per_seed() -> None:
    info = get_generator("ladder")
    a = [run_generator(info, s, 14, {"shift": "range"}) for s in range(20)]
    b = [run_generator(info, s, 14, {"shift": "range"}) for s in range(20)]
    assert a == b
    assert len({str(r["values"]) for r in a}) > 15


@pytest.mark.parametrize("bad", [0, 6, 10, 16])
def test_bad_difficulty_is_rejected(bad: int) -> None:
    with pytest.raises(ValueError, match="ladder difficulty"):
        decode(bad)


def test_bad_shift_is_rejected() -> None:
    with pytest.raises(ValueError, match="shift"):
        ladder(random.Random(0), 1, shift="upside-down")


@pytest.mark.parametrize("name", ["ladder_range", "ladder_length", "ladder_sign"])
def test_task_buckets_hold_the_right_level_and_variant(name: str) -> None:
    spec = load_spec(TASKS / f"{name}.yaml")
    inst = build_instances(spec, f"easy2hard/{name}", 0, TASKS, limit_per_bucket=4)
    assert len(inst.items) == 40
    for it in inst.items:
        level, variant = decode(int(it.difficulty))
        assert (it.record["level"], it.record["variant"]) == (level, variant)
        assert it.bucket.role == ("ID" if variant == "id" else "OOD")
    assert inst.pool and all(p.record["variant"] == "id" for p in inst.pool)
