"""Difficulty from labels ("Level 3"), quantile buckets cut from the data, and the MATH mirror."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from harness.errors import HarnessError, TaskSpecError
from harness.items import build_instances
from harness.spec.difficulty import parse_difficulty, quantile_edges
from harness.spec.task import TaskSpec
from harness.tasks.loader import load_spec

TASKS = Path(__file__).resolve().parents[2] / "tasks" / "easy2hard"


def test_parse_difficulty() -> None:
    assert parse_difficulty("Level 3", r"([0-9]+)") == 3.0
    assert parse_difficulty(4, r"([0-9]+)") == 4.0
    assert parse_difficulty("Level ?", r"([0-9]+)") is None
    assert parse_difficulty("hard-2.5", r"-?\d+\.\d+") == -2.5  # no group: the whole match
    with pytest.raises(TaskSpecError, match="fields.difficulty_pattern"):
        parse_difficulty("x", "([")


def test_quantile_edges_hand_computed() -> None:
    # numpy's linear quantiles of 1..10 at 0, .2, .4, .6, .8, 1
    assert quantile_edges(list(range(1, 11)), 5) == pytest.approx([1, 2.8, 4.6, 6.4, 8.2, 10])
    with pytest.raises(TaskSpecError, match="buckets.quantiles: 5 buckets need distinct"):
        quantile_edges([1, 1, 1, 2], 5)


def spec_for(path: Path, extra: str = "") -> TaskSpec:
    import yaml

    data = yaml.safe_load(
        f"name: e2h\ndescription: d\nsource: {{type: files, path: {path}}}\n"
        "fields: {difficulty: rating, target: answer}\nbuckets: {quantiles: 5}\n"
        "roles: {id: [q1, q2]}\ntemplates: [{id: a, prompt: '{{ problem }}'}]\n"
        "fewshot: {k: 1}\noutput: {type: generate}\n" + extra)
    return TaskSpec.model_validate(data)


def test_quantile_buckets_are_equal_count_and_ordered(tmp_path: Path) -> None:
    rng = random.Random(5)
    ratings = [rng.random() for _ in range(100)]
    data = tmp_path / "e2h.jsonl"
    data.write_text("".join(json.dumps({"problem": f"p{i}", "answer": "1", "rating": r}) + "\n"
                            for i, r in enumerate(ratings)))
    inst = build_instances(spec_for(data), "x/e2h", 0, tmp_path)
    assert [b.label for b in inst.buckets] == ["q1", "q2", "q3", "q4", "q5"]
    assert [b.role for b in inst.buckets] == ["ID", "ID", "OOD", "OOD", "OOD"]
    assert Counter(it.bucket.label for it in inst.items) == {f"q{i}": 20 for i in range(1, 6)}
    ranked = sorted(ratings)
    for it in inst.items:  # bucket q_i holds exactly the i-th fifth of the sorted ratings
        pos = ranked.index(it.difficulty)
        assert it.bucket.index == pos // 20
    assert inst.dropped == 0 and {p.bucket.label for p in inst.pool} == {"q1", "q2"}
    limited = build_instances(spec_for(data), "x/e2h", 0, tmp_path, limit_per_bucket=3)
    assert [b.lo for b in limited.buckets] == [b.lo for b in inst.buckets]  # edges: all data


def test_quantile_spec_errors(tmp_path: Path) -> None:
    data = tmp_path / "flat.jsonl"
    data.write_text("".join(json.dumps({"problem": "p", "answer": "1", "rating": 1}) + "\n"
                            for _ in range(10)))
    with pytest.raises(HarnessError, match="buckets.quantiles"):
        build_instances(spec_for(data), "x/e2h", 0, tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"name: bad\ndescription: d\nsource: {{type: files, path: {data}}}\n"
                   "buckets: {quantiles: 3}\nroles: {id_max: 1}\n"
                   "templates: [{id: a, prompt: x}]\noutput: {type: generate}\n")
    with pytest.raises(TaskSpecError, match="roles: quantile buckets need roles.id"):
        load_spec(bad)
    bad.write_text(bad.read_text().replace("{quantiles: 3}", "{quantiles: 3, values: [1]}"))
    with pytest.raises(TaskSpecError, match="exactly one of 'values', 'edges' or 'quantiles'"):
        load_spec(bad)


def test_math_mirror_levels_and_exemplar_pool(shared_data: Path) -> None:
    spec = load_spec(TASKS / "math.yaml")
    inst = build_instances(spec, "easy2hard/math", 0, TASKS)
    # the official test split: L1 437, L2 894, L3 1131, L4 1214, L5 1324 (PROVENANCE.md)
    assert Counter(it.bucket.label for it in inst.items) == {
        "1": 437, "2": 894, "3": 1131, "4": 1214, "5": 1324}
    for it in inst.items[:200]:
        assert it.record["level"] == f"Level {int(it.difficulty)}"
    # exemplars: train levels 1-3 only (564 + 1348 + 1592); the two "Level ?" items are dropped
    assert len(inst.pool) == 564 + 1348 + 1592
    assert all(p.id.startswith("fs:train/") and p.difficulty <= 3 for p in inst.pool)
    sgr = load_spec(TASKS / "math_sgr.yaml")
    sgr_inst = build_instances(sgr, "easy2hard/math_sgr", 0, TASKS, limit_per_bucket=2)
    assert Counter(p.difficulty for p in sgr_inst.pool) == {1: 564, 2: 1348, 3: 1592,
                                                             4: 1690, 5: 2304}


def test_tasks_sample_names_the_file_of_a_template_its_items_cannot_fill(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from harness.cli.main import app

    data = tmp_path / "e2h.jsonl"
    data.write_text("".join(json.dumps({"problem": f"p{i}", "answer": "1", "rating": i}) + "\n"
                            for i in range(10)))
    task = tmp_path / "e2h.yaml"
    task.write_text(f"name: e2h\ndescription: d\nsource: {{type: files, path: {data}}}\n"
                    "fields: {difficulty: rating, target: answer}\nbuckets: {quantiles: 2}\n"
                    "roles: {id: [q1]}\ntemplates: [{id: a, prompt: '{{ qu }}'}]\n"
                    "output: {type: generate}\n")
    out = CliRunner().invoke(app, ["tasks", "sample", "e2h", "-n", "1",
                                   "--include-path", str(tmp_path)])
    assert out.exit_code != 0
    assert str(out.exception).startswith(f"{task}: task e2h: template 'a' (prompt), item ")
    assert "'qu' is undefined" in str(out.exception) and "\n" not in str(out.exception)
