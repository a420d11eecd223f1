"""``harness data export``: deterministic, never a same-seed eval prompt, overlap reported, the
declared mix kept (skipped items replaced), every value of an ``roles.id_range`` covered."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.data import export as export_mod
from harness.data.export import ExportReport, export, export_to
from harness.errors import HarnessError
from harness.items import build_instances
from harness.outputs.prompts import build_prompt
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex
from harness.tasks.refs import TaskRef

TASK = "lengthgen/addition_reversed"
ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "examples" / "reference_models" / "tasks"


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


def _counts(text: str, key: str = "difficulty") -> Counter[object]:
    return Counter(json.loads(line)[key] for line in text.splitlines())


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
    assert "overlap with eval seeds [1, 2]" in rep.lines()[2]


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


def test_skipped_items_are_replaced_so_every_bucket_keeps_its_share(index: TaskIndex) -> None:
    spec, ref = _task(index, TASK)
    text, rep = _rows(spec, ref, 3000, 0)
    # the 1-digit space is mostly eval items: many skips, yet every bucket gets 1000 rows
    assert rep.skipped_eval > 300
    assert _counts(text, "bucket") == {"1": 1000, "3": 1000, "5": 1000}
    assert rep.histogram == {1.0: 1000, 3.0: 1000, 5.0: 1000}


def test_id_range_export_covers_every_value_equally() -> None:
    index = TaskIndex.build([REFERENCE])
    spec, ref = _task(index, "reference/copy_unique")
    assert spec.roles.id_range is not None and spec.buckets.values == [2, 4, 6, 8, 9, 10, 12, 16]
    text, rep = _rows(spec, ref, 7 * 60, 0)
    rows = [json.loads(line) for line in text.splitlines()]
    # every ID value 2..8, the ones without an eval bucket (3, 5, 7) included, 60 rows each
    assert _counts(text) == {float(v): 60 for v in range(2, 9)} == rep.histogram
    assert "rows per length: 2: 60, 3: 60, 4: 60, 5: 60, 6: 60, 7: 60, 8: 60" in rep.lines()
    assert {r["bucket"] for r in rows} == {"2", "4", "6", "8", None}
    assert all((r["bucket"] is None) == (r["difficulty"] in (3, 5, 7)) for r in rows)
    assert all(len(set(r["target"])) == len(r["target"]) == r["difficulty"] for r in rows)  # unique
    assert not {r["prompt"] for r in rows} & _eval_prompts(spec, ref, 0)
    assert rep.skipped_eval == 0 or rep.skipped_eval < 20  # a large space: skips are rare


def test_id_range_uniform_draw_is_seeded_and_covers_the_range(tmp_path: Path) -> None:
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "u.yaml").write_text(
        f"include: {REFERENCE / 'reference' / 'parity.yaml'}\nname: u\nsuites: [t]\n"
        "roles: {id_range: {min: 1, max: 12, draw: uniform}}\n", encoding="utf-8")
    index = TaskIndex.build([tmp_path])
    spec, ref = _task(index, "t/u")
    a, rep = _rows(spec, ref, 1200, 0)
    b, _ = _rows(spec, ref, 1200, 0)
    assert a == b and sum(rep.histogram.values()) == 1200
    counts = _counts(a)
    assert set(counts) == {float(v) for v in range(1, 13)}
    assert len(set(counts.values())) > 1  # drawn, not cycled
    assert all(50 <= n <= 150 for n in counts.values())  # 100 expected per value


def test_a_value_the_eval_uses_up_is_named_and_left_out(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    # 100 eval items of 4 bits take all 16 strings of that length: nothing is left to train on
    (tmp_path / "t").mkdir()
    (tmp_path / "t" / "p.yaml").write_text(
        f"include: {REFERENCE / 'reference' / 'parity.yaml'}\nname: p\nsuites: [t]\n"
        "buckets: {values: [4, 8, 16]}\nroles: {id_range: {min: 4, max: 8}}\n",
        encoding="utf-8")
    monkeypatch.setattr(export_mod, "_MAX_SKIPS", 500)
    index = TaskIndex.build([tmp_path])
    spec, ref = _task(index, "t/p")
    text, rep = _rows(spec, ref, 40, 0)
    assert _counts(text) == {5.0: 10, 6.0: 10, 7.0: 10, 8.0: 10}  # 4 bits left out
    assert rep.used_up == ["4"]
    assert "no rows of bits 4: 500 generated items in a row were same-seed eval prompts" in \
        "\n".join(rep.lines())
    (tmp_path / "t" / "p.yaml").write_text(
        f"include: {REFERENCE / 'reference' / 'parity.yaml'}\nname: p\nsuites: [t]\n"
        "buckets: {values: [2, 4, 8]}\nroles: {id_range: {min: 2, max: 4}}\n",
        encoding="utf-8")
    index = TaskIndex.build([tmp_path])
    spec, ref = _task(index, "t/p")  # 2, 3 and 4 bits: 28 strings, the eval holds 2- and 4-bit
    text, rep = _rows(spec, ref, 10, 0)
    assert set(_counts(text)) == {3.0} and rep.used_up == ["2", "4"]


def test_cli_include_path_prints_the_histogram(tmp_path: Path) -> None:
    out = tmp_path / "rows.jsonl"
    args = ["data", "export", "reference/parity", "--n", "24", "--out", str(out)]
    missing = CliRunner().invoke(app, args)
    assert missing.exit_code != 0 and not out.exists()  # not a built-in task
    res = CliRunner().invoke(app, [*args, "--include-path", str(REFERENCE)])
    assert res.exit_code == 0, res.output
    assert "rows per bits: " + ", ".join(f"{v}: 2" for v in range(1, 13)) in res.output
    assert len(out.read_text(encoding="utf-8").splitlines()) == 24
