"""``harness data export``: deterministic, never a same-seed eval prompt, overlap reported."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from harness.data.export import ExportReport, export, export_to
from harness.errors import HarnessError
from harness.tasks.index import TaskIndex
from harness.tasks.instances import build_instances
from harness.tasks.prompts import build_prompt
from harness.tasks.refs import TaskRef
from harness.tasks.spec import GeneratorSource, TaskSpec

TASK = "lengthgen/addition_reversed"


@pytest.fixture(scope="module")
def index() -> TaskIndex:
    return TaskIndex.build([])


def _task(index: TaskIndex, name: str) -> tuple[TaskSpec, TaskRef]:
    ref = index.resolve([name])[0]
    return index.spec(ref), ref


def _rows(spec: TaskSpec, ref: TaskRef, n: int, seed: int, overlap: int = 0
          ) -> tuple[str, ExportReport]:
    buf = io.StringIO()
    rep = export(spec, ref, buf, n, "ID", seed, None, overlap)
    return buf.getvalue(), rep


def _eval_prompts(spec: TaskSpec, ref: TaskRef, seed: int) -> set[str]:
    """What the runner would show at --num-fewshot 0, every template, computed here directly."""
    inst = build_instances(spec, ref.address, seed, ref.base_dir, None)
    return {build_prompt(spec, t, it, []) for it in inst.items for t in spec.templates}


def test_same_seed_same_bytes_other_seed_differs(index: TaskIndex) -> None:
    spec, ref = _task(index, TASK)
    a, _ = _rows(spec, ref, 300, 0)
    b, _ = _rows(spec, ref, 300, 0)
    c, _ = _rows(spec, ref, 300, 1)
    assert a == b
    assert a != c
    assert len(a.splitlines()) == 300


def test_rows_are_id_and_never_a_same_seed_eval_prompt(index: TaskIndex) -> None:
    spec, ref = _task(index, TASK)
    text, rep = _rows(spec, ref, 2000, 0)
    rows = [json.loads(line) for line in text.splitlines()]
    assert {r["bucket"] for r in rows} <= {"1", "3", "5"}  # ID buckets only
    assert not {r["prompt"] for r in rows} & _eval_prompts(spec, ref, 0)
    # the 1-digit space (100 sums) is all but covered by the eval's 100 items: the filter acts
    assert rep.skipped_eval > 0
    # a reversed sum is the target: check one row's arithmetic
    r = rows[0]
    a, b = (int(x) for x in r["prompt"].split(":")[1].rstrip("=").split("+"))
    assert r["target"] == str(a + b)[::-1]


def test_overlap_with_other_seeds_is_reported_exactly(index: TaskIndex) -> None:
    spec, ref = _task(index, "lengthgen/addition_reversed")
    text, rep = _rows(spec, ref, 3000, 0, overlap=2)
    written = {json.loads(line)["prompt"] for line in text.splitlines()}
    other = _eval_prompts(spec, ref, 1) | _eval_prompts(spec, ref, 2)
    # ID prompts only: the report counts the exported role's eval items
    inst = build_instances(spec, ref.address, 1, ref.base_dir, None)
    assert rep.other_seeds == [1, 2]
    assert rep.other_hit == len(written & other) > 0  # the small 1- and 3-digit spaces overlap
    assert 0 < rep.other_eval_items <= len(other)
    assert inst.count({"1", "3", "5"}) > 0
    assert "overlap with eval seeds [1, 2]" in rep.lines()[1]


def test_every_generator_task_exports(index: TaskIndex, tmp_path: Path, shared_data: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GENHARNESS_DATA", str(shared_data))  # generators reading data files
    done = 0
    for ref in index.all_refs().values():
        spec = index.spec(ref)
        if not isinstance(spec.source, GeneratorSource):
            continue
        out = tmp_path / "t.jsonl"
        rep = export_to(spec, ref, out, 5, "ID", 0, None, 0)
        lines = out.read_text(encoding="utf-8").splitlines()
        assert rep.written == len(lines) == 5, ref.address
        assert all(json.loads(x)["prompt"] for x in lines)
        done += 1
    assert done >= 10


def test_file_or_dataset_task_is_one_clear_error(index: TaskIndex, tmp_path: Path) -> None:
    ref = next(r for r in index.all_refs().values()
               if not isinstance(index.spec(r).source, GeneratorSource))
    out = tmp_path / "t.jsonl"
    with pytest.raises(HarnessError, match="not a generator"):
        export_to(index.spec(ref), ref, out, 5, "ID", 0, None, 0)
    assert not out.exists() and not list(tmp_path.iterdir())  # no partial file left


def test_unknown_role_and_template(index: TaskIndex) -> None:
    spec, ref = _task(index, TASK)
    with pytest.raises(HarnessError, match="--role"):
        export(spec, ref, io.StringIO(), 1, "XX", 0, None, 0)
    with pytest.raises(HarnessError, match="--template"):
        export(spec, ref, io.StringIO(), 1, "ID", 0, "nope", 0)
