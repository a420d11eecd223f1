"""``roles.id_range``: the ID role as a range of the difficulty (buckets inside it are ID, a bucket
partly inside is an error, exactly one of id_max / id / id_range), and the generator options the
reference tasks contrast (copy ``unique``, addition ``index_hints``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from harness.errors import TaskSpecError
from harness.generators.arithmetic import addition, hinted
from harness.generators.sequences import copy
from harness.spec.buckets import build_buckets
from harness.spec.task import BucketsSpec, RolesSpec
from harness.tasks.loader import load_spec

REFERENCE = Path(__file__).resolve().parents[2] / "examples" / "reference_models" / "tasks"


def _roles(values: list[float] | None = None, edges: list[float] | None = None,
           **roles: object) -> list[tuple[str, str]]:
    b = build_buckets(BucketsSpec(values=values, edges=edges), RolesSpec.model_validate(roles))
    return [(x.label, x.role) for x in b]


def test_buckets_inside_the_range_are_id_on_both_sides() -> None:
    got = _roles([1, 2, 3, 5, 6, 9], id_range={"min": 2, "max": 5})
    assert got == [("1", "OOD"), ("2", "ID"), ("3", "ID"), ("5", "ID"), ("6", "OOD"),
                   ("9", "OOD")]
    assert _roles(edges=[1, 4, 6, 9], id_range={"min": 1, "max": 5}) == [
        ("1-3", "ID"), ("4-5", "ID"), ("6-8", "OOD")]


def test_a_bucket_across_the_range_end_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"roles.id_range: bucket 4-7 is partly inside"):
        _roles(edges=[1, 4, 8], id_range={"min": 1, "max": 5})


@pytest.mark.parametrize(("roles", "message"), [
    ({"id_max": 5, "id_range": {"min": 1, "max": 5}}, "exactly one of"),
    ({}, "exactly one of"),
    ({"id_range": {"min": 5, "max": 1}}, r"max \(1\) is below min \(5\)"),
    ({"id_range": {"min": 1, "max": 5, "draw": "random"}}, "'every' or 'uniform'"),
    ({"id_range": {"min": 1.5, "max": 5}}, "integer"),
])
def test_bad_roles_are_refused(roles: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RolesSpec.model_validate(roles)


def test_task_file_errors_name_the_key(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    base = f"include: {REFERENCE / 'reference' / 'parity.yaml'}\nname: t\n"
    path.write_text(base + "buckets: {values: null, edges: [8, 11, 14, 20]}\n", encoding="utf-8")
    # the key is written in the included file: its line there, the includer named
    with pytest.raises(TaskSpecError, match=r"parity.yaml:\d+: roles.id_range: bucket 11-13 is "
                       r"partly .*\(included by .*t.yaml\)$"):
        load_spec(path)
    path.write_text(base + "roles: {id_max: 12}\n", encoding="utf-8")  # id_range inherited
    with pytest.raises(TaskSpecError, match="exactly one of 'id_max', 'id' or 'id_range'"):
        load_spec(path)
    path.write_text(base + "roles: {id_range: {min: 1, max: 13}}\n", encoding="utf-8")
    spec = load_spec(path)
    assert spec.roles.id_range is not None and spec.roles.id_range.max == 13


def test_copy_unique_never_repeats_and_default_still_may() -> None:
    rng = random.Random(0)
    rows = [copy(rng, 8, unique=True)["text"].split() for _ in range(300)]
    assert all(len(set(r)) == 8 for r in rows)
    plain = [copy(random.Random(i), 8)["text"].split() for i in range(300)]
    assert sum(len(set(r)) < 8 for r in plain) > 150  # 70% of 8-letter draws repeat a letter
    assert copy(random.Random(3), 8) == copy(random.Random(3), 8, unique=False)  # unchanged
    with pytest.raises(ValueError, match="unique: length must be 1-3"):
        copy(rng, 4, alphabet="abca", unique=True)


def test_index_hints_tag_every_digit_with_its_place() -> None:
    assert hinted("321") == "c3b2a1"
    assert hinted("7") == "a7"
    for seed in range(200):
        r = addition(random.Random(seed), 4, reverse_output=True, index_hints=True)
        total = str(r["a"] + r["b"])
        # the reversed sum, each digit after its place letter (a = units), carry digit included
        assert r["target"] == "".join("abcde"[i] + d for i, d in enumerate(total[::-1]))
        assert r["a_hinted"][1::2] == str(r["a"]) and r["a_hinted"][0::2] == "dcba"
        plain = addition(random.Random(seed), 4, index_hints=True)
        assert plain["target"] == hinted(total)
    same = addition(random.Random(5), 3, reverse_output=True)
    assert same == {k: v for k, v in addition(random.Random(5), 3, reverse_output=True,
                                              index_hints=True).items()
                    if k not in ("a_hinted", "b_hinted", "target")} | {"target": same["target"]}
    with pytest.raises(ValueError, match="index_hints: at most 25 digits"):
        addition(random.Random(0), 26, index_hints=True)


def test_windowed_hints_start_anywhere_and_leave_room_for_the_carry() -> None:
    from harness.generators.arithmetic import HINTS

    assert hinted("321", 2) == "e3d2c1"
    starts = set()
    for seed in range(400):
        r = addition(random.Random(seed), 5, reverse_output=True, index_hints=True,
                     hint_window=True)
        first = HINTS.index(r["a_hinted"][-2])  # the units' letter
        starts.add(first)
        letters = HINTS[first:first + 6]
        total = str(r["a"] + r["b"])
        assert r["target"] == "".join(letters[i] + d for i, d in enumerate(total[::-1]))
        assert r["a_hinted"][0::2] == r["b_hinted"][0::2] == letters[:5][::-1]
    assert starts == set(range(len(HINTS) - 5))  # every start that fits 5 places and a carry
    with pytest.raises(ValueError, match="hint_window: only with index_hints"):
        addition(random.Random(0), 3, hint_window=True)


def test_hinted_parity_writes_each_bit_then_the_running_parity() -> None:
    from harness.generators.sequences import parity

    for seed in range(200):
        r = parity(random.Random(seed), 7, index_hints=True, hint_window=True)
        bits = r["text"].split(" ")
        tags = r["text_hinted"][0::2]
        assert r["text_hinted"][1::2] == "".join(bits)
        assert tags == "abcdefghijklmnopqrstuvwxyz"[ord(tags[0]) - 97:][:7]
        steps = [r["scratchpad_hinted"][i:i + 4] for i in range(0, 28, 4)]
        assert [s[0] for s in steps] == list(tags) and [s[1] for s in steps] == bits
        assert [s[3] for s in steps] == r["scratchpad"].split(" ")
        assert steps[-1][3] == r["target"]
    same = parity(random.Random(9), 5)
    assert same == {k: v for k, v in parity(random.Random(9), 5, index_hints=True).items()
                    if not k.endswith("_hinted")}  # hints add fields, change nothing else
    with pytest.raises(ValueError, match="at most 26 bits"):
        parity(random.Random(0), 27, index_hints=True)
