"""SCAN: the grammar reproduces the official tasks.txt, the split rules reproduce the official
split files, and the generators control difficulty and are deterministic."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest

from harness.generators.scan import (
    SPLITS,
    all_pairs,
    enumerate_commands,
    interpret,
    render_actions,
    scan_addprim,
    scan_file,
    scan_length,
    split_side,
    subcommands,
)


def read_official(path: Path) -> Counter[tuple[str, tuple[str, ...]]]:
    out: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for line in path.read_text().splitlines():
        cmd, act = line[len("IN: "):].split(" OUT: ")
        out[(cmd, tuple(act.split()))] += 1
    return out


def test_grammar_has_20910_distinct_commands() -> None:
    cmds = enumerate_commands()
    assert len(cmds) == 20910 == len(set(cmds))


@pytest.mark.parametrize("command,actions", [  # the examples of the SCAN README
    ("jump", "I_JUMP"),
    ("jump left", "I_TURN_LEFT I_JUMP"),
    ("jump around right", " ".join(["I_TURN_RIGHT I_JUMP"] * 4)),
    ("turn left twice", "I_TURN_LEFT I_TURN_LEFT"),
    ("jump thrice", "I_JUMP I_JUMP I_JUMP"),
    ("jump opposite left and walk thrice", "I_TURN_LEFT I_TURN_LEFT I_JUMP I_WALK I_WALK I_WALK"),
    ("jump opposite left after walk around left",
     " ".join(["I_TURN_LEFT I_WALK"] * 4) + " I_TURN_LEFT I_TURN_LEFT I_JUMP"),
])
def test_interpret_readme_examples(command: str, actions: str) -> None:
    assert " ".join(interpret(command)) == actions


def test_reproduces_official_tasks_txt_exactly(shared_data: Path) -> None:
    assert Counter(all_pairs()) == read_official(shared_data / "scan" / "tasks.txt")


@pytest.mark.parametrize("split", SPLITS)
def test_split_rules_reproduce_official_split_files(split: str, shared_data: Path) -> None:
    test = Counter(p for p in all_pairs() if split_side(p[0], p[1], split) == "test")  # type: ignore[arg-type]
    train = {p for p in all_pairs() if split_side(p[0], p[1], split) == "train"}  # type: ignore[arg-type]
    off_test = read_official(shared_data / "scan" / f"tasks_test_{split}.txt")
    off_train = read_official(shared_data / "scan" / f"tasks_train_{split}.txt")
    assert test == off_test
    assert train == set(off_train)
    repeated = {cmd for (cmd, _), n in off_train.items() if n > 1}  # the over-represented primitive
    assert repeated == ({"jump"} if split == "addprim_jump" else
                        {"turn left"} if split == "addprim_turn_left" else set())


def test_subcommands_execute_in_order() -> None:
    assert subcommands("walk twice after jump left") == ["jump left", "walk twice"]
    assert subcommands("walk twice and jump left") == ["walk twice", "jump left"]
    for cmd in enumerate_commands()[::97]:
        assert [a for s in subcommands(cmd) for a in interpret(s)] == interpret(cmd)


def test_short_style() -> None:
    assert render_actions(interpret("jump left twice"), "short") == "LTURN JUMP LTURN JUMP"
    assert render_actions(interpret("jump left twice"), "words") == "left jump left jump"
    with pytest.raises(ValueError):
        render_actions(["I_JUMP"], "fancy")


BINS = [[1, 8], [9, 16], [17, 22], [24, 26], [27, 30], [32, 36], [40, 48]]


def test_scan_length_difficulty_control_and_determinism() -> None:
    for lo, hi in BINS:
        for seed in range(30):
            rec = scan_length(random.Random(seed), hi, bins=BINS)
            assert lo <= rec["length"] <= hi == max(lo, hi)
            assert rec["length"] == len(interpret(rec["command"]))
            assert rec["actions"] == " ".join(interpret(rec["command"]))
            assert rec == scan_length(random.Random(seed), hi, bins=BINS)
    assert scan_length(random.Random(0), 24)["length"] == 24  # without bins: exact length
    with pytest.raises(ValueError, match="no SCAN command"):
        scan_length(random.Random(0), 23)
    with pytest.raises(ValueError, match="straddles"):
        scan_length(random.Random(0), 26, bins=[[20, 26]])


@pytest.mark.parametrize("split,prim", [("addprim_jump", "jump"),
                                        ("addprim_turn_left", "turn left")])
def test_scan_addprim_sides(split: str, prim: str) -> None:
    bare = 0
    for seed in range(200):
        rec0 = scan_addprim(random.Random(seed), 0, split=split)
        rec1 = scan_addprim(random.Random(seed), 1, split=split)
        if rec0["command"] == prim:
            bare += 1
        else:
            assert f" {prim} " not in f" {rec0['command']} "
        assert f" {prim} " in f" {rec1['command']} " and rec1["command"] != prim
    assert 5 <= bare <= 40  # about primitive_rate = 10%


def test_scan_file_reads_official_simple_split(shared_data: Path) -> None:
    path = str(shared_data / "scan" / "tasks_test_simple.txt")
    official = {c for c, _ in read_official(Path(path))}
    for seed in range(20):
        rec = scan_file(random.Random(seed), 16, path=path, bins=[[9, 16]])
        assert rec["command"] in official and 9 <= rec["length"] <= 16
    with pytest.raises(ValueError, match="not found"):
        scan_file(random.Random(0), 8, path="/no/such/scan.txt")
