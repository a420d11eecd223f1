"""Passkey as a balanced length × depth grid (issue 17, item 5): every cell holds an equal share
of the items, and the per-depth effective lengths carry per-cell n and Wilson intervals."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.analyses.lengthgen import effective_length_analysis
from harness.errors import TaskSpecError
from harness.items import build_instances, grid_points
from harness.scoring.records import SampleRecord
from harness.tasks.index import TaskIndex
from harness.tasks.loader import load_spec

DEPTHS = [0.0, 0.25, 0.5, 0.75, 1.0]


def passkey_items(seed: int, limit: int | None) -> list[tuple[float, float]]:
    index = TaskIndex.build([])
    ref = index.resolve(["lengthgen/passkey"])[0]
    inst = build_instances(index.spec(ref), ref.address, seed, ref.base_dir, limit)
    return [(it.difficulty, float(it.record["depth"])) for it in inst.items]


@pytest.mark.parametrize("seed", [0, 1, 7])
def test_every_length_depth_cell_holds_the_same_number_of_items(seed: int) -> None:
    cells = Counter(passkey_items(seed, None))
    lengths = {length for length, _ in cells}
    assert lengths == {128.0, 256.0, 512.0, 1024.0}
    assert set(cells) == {(length, d) for length in lengths for d in DEPTHS}
    assert set(cells.values()) == {10}  # 50 items per length over 5 depths
    # a smaller limit keeps the balance when it is a multiple of the depths
    assert set(Counter(passkey_items(seed, 10)).values()) == {2}


def test_grid_points_cycle_in_file_order() -> None:
    assert grid_points({}) == []
    assert grid_points({"a": [1, 2], "b": ["x", "y", "z"]})[:4] == [
        {"a": 1, "b": "x"}, {"a": 1, "b": "y"}, {"a": 1, "b": "z"}, {"a": 2, "b": "x"}]


def test_grid_keys_and_values_are_checked_when_the_task_loads(tmp_path: Path) -> None:
    base = (Path(__file__).resolve().parents[2] / "tasks" / "lengthgen" / "passkey.yaml"
            ).read_text(encoding="utf-8")
    bad = tmp_path / "p.yaml"
    bad.write_text(base.replace("    depth: [0.0", "    dept: [0.0"), encoding="utf-8")
    with pytest.raises(TaskSpecError, match=r"source.grid.dept: generator 'passkey' takes no "
                                            r"parameter 'dept'"):
        load_spec(bad)
    bad.write_text(base.replace("depth: [0.0, 0.25, 0.5, 0.75, 1.0]", "depth: []"),
                   encoding="utf-8")
    with pytest.raises(TaskSpecError, match="source.grid.depth: needs at least one value"):
        load_spec(bad)


def rec(length: int, depth: float, i: int, score: float, index: int) -> SampleRecord:
    return SampleRecord(task="lengthgen/passkey", id=f"{length}/{i}", template="passkey",
                        fewshot_ids=[], difficulty=float(length), bucket=str(length),
                        bucket_index=index, role="ID" if length <= 256 else "OOD", prompt="p",
                        target="1", output="1", extracted="1", score=score,
                        meta={"depth": depth})


def test_per_depth_rows_carry_n_and_wilson_intervals_and_untested_lengths() -> None:
    from harness.spec.buckets import Bucket

    lengths = [128, 256, 512, 1024]
    buckets = [Bucket(i, str(v), float(v), float(v), True, "ID" if v <= 256 else "OOD")
               for i, v in enumerate(lengths)]
    samples = [rec(v, d, 10 * k + j, 1.0 if v < 1024 else 0.0, i)
               for i, v in enumerate(lengths) for k, d in enumerate(DEPTHS) for j in range(4)
               if not (v == 1024 and d == 0.0)]  # one cell left empty
    res = effective_length_analysis(samples, buckets, {"threshold": 0.5}, 0)
    assert res.value == 512
    by_depth = res.details["by_depth"]
    assert by_depth["0.25"]["untested"] == [] and by_depth["0.25"]["effective_length"] == 512
    zero = by_depth["0"]
    assert zero["untested"] == [1024]  # 512 at depth 0 is a lower bound: 1024 never tested
    row = zero["per_length"][0]
    assert (row["n"], row["accuracy"]) == (4, 1.0)
    assert 0.0 < row["ci_low"] < 1.0 and row["ci_high"] == 1.0
