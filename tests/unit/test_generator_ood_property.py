"""Every OOD item carries the shift that defines it (issue 17, item 4), over many seeds."""

from __future__ import annotations

from harness.generators.registry import get_generator, run_generator


def test_ladder_sign_ood_items_always_hold_a_negative_number() -> None:
    gen = get_generator("ladder")
    for level in range(1, 6):
        for seed in range(400):
            ood = run_generator(gen, seed, 10 + level, {"shift": "sign"})
            assert any(v < 0 for v in ood["values"]), (seed, level, ood["list"])
            idd = run_generator(gen, seed, level, {"shift": "sign"})
            assert all(v > 0 for v in idd["values"])


def test_ladder_range_and_length_ood_items_carry_their_shift() -> None:
    gen = get_generator("ladder")
    for seed in range(200):
        assert all(v >= 10 for v in run_generator(gen, seed, 13, {"shift": "range"})["values"])
        assert len(run_generator(gen, seed, 13, {"shift": "length", "ood_n": 8})["values"]) == 8
