"""The reference-model probe tasks (examples/reference_models/tasks) load, keep the shipped
task's template and scoring, and cover every length around the edge of the ID range."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.tasks.index import TaskIndex

ROOT = Path(__file__).resolve().parents[2]
PROBES = ROOT / "examples" / "reference_models" / "tasks"


@pytest.mark.parametrize(("probe", "shipped", "lengths", "id_max"), [
    ("probe/addition_reversed_fine", "lengthgen/addition_reversed", [4, 5, 6, 7, 8], 5),
    ("probe/copy_fine", "lengthgen/copy", [7, 8, 9, 10, 11, 12], 8),
])
def test_probe_task_is_the_shipped_task_with_every_length(probe: str, shipped: str,
                                                         lengths: list[int], id_max: int) -> None:
    index = TaskIndex.build([PROBES])
    spec = index.spec(index.resolve([probe])[0])
    base = index.spec(index.resolve([shipped])[0])
    assert spec.buckets.values == lengths
    assert spec.roles.id_max == id_max
    assert spec.templates == base.templates and spec.scoring == base.scoring
    assert spec.source == base.source and spec.output == base.output
