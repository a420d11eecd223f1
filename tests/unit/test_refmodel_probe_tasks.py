"""The reference models' task files (examples/reference_models/tasks): the probe tasks keep the
shipped task's template and scoring and cover every length around the edge of the ID range; the
reference tasks train on a range and test just past its edge, and each contrast pair differs
only in what it contrasts."""

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


REFERENCE = ["reference/parity", "reference/copy_unique", "reference/copy_repeat",
             "reference/addition_reversed", "reference/addition_hints"]


def test_reference_tasks_train_on_a_range_and_test_just_past_its_edge() -> None:
    index = TaskIndex.build([PROBES])
    for address in REFERENCE:
        spec = index.spec(index.resolve([address])[0])
        rng = spec.roles.id_range
        assert rng is not None and spec.roles.id_max is None, address
        values = spec.buckets.values or []
        ood = [v for v in values if v > rng.max]
        # the first OOD bucket is the next length; at least three OOD buckets within 2x
        assert ood[0] == rng.max + 1 and len([v for v in ood if v <= 2 * rng.max]) >= 3, address


def _spec_dump(index: TaskIndex, address: str) -> dict[str, object]:
    return index.spec(index.resolve([address])[0]).model_dump()


@pytest.mark.parametrize(("a", "b", "differs"), [
    ("reference/copy_unique", "reference/copy_repeat", {"source", "description", "card", "name"}),
    ("reference/addition_reversed", "reference/addition_hints",
     {"source", "description", "name", "templates", "output", "scoring", "citations"}),
])
def test_contrast_pairs_differ_only_where_they_should(a: str, b: str, differs: set[str]) -> None:
    index = TaskIndex.build([PROBES])
    sa, sb = _spec_dump(index, a), _spec_dump(index, b)
    assert {k for k in sa if sa[k] != sb[k]} == differs
    pa, pb = dict(sa["source"]), dict(sb["source"])  # type: ignore[call-overload]
    assert {k for k in pa if pa[k] != pb[k]} == {"params"}
