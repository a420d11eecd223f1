"""A variant evaluates its base's items with ``items_from`` (issue 37, point 5): a task that
includes another and changes only its template evaluates, item for item, the same items (and
exemplars), and ``harness compare`` pairs the two runs item by item; without the key the items
differ (they are seeded by the task's own address) and the runs are not paired."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError, TaskSpecError
from harness.evaluation import evaluate
from harness.leaderboard.paired import compare_runs
from harness.results import spec_hash
from harness.tasks.loader import load_spec
from harness.testing import ScriptedLM

MOVES = """\
name: moves
description: copy letters
source: {type: generator, name: copy, per_bucket: 12}
fields: {target: target, difficulty: length}
buckets: {values: [2, 3, 6]}
roles: {id_max: 3}
templates: [{id: io, prompt: "Copy: {{ text }}\\nAnswer:"}]
fewshot: {k: 2}
output: {type: generate, max_tokens: 20, stop: ["\\n"]}
"""


def _folder(tmp_path: Path, items_from: bool) -> Path:
    folder = tmp_path / "tasks" / "mine"
    folder.mkdir(parents=True)
    (folder / "moves.yaml").write_text(MOVES)
    (folder / "stepwise.yaml").write_text(
        "include: moves.yaml\nname: stepwise\n"
        + ("items_from: mine/moves\n" if items_from else "")
        + "templates: [{id: step, prompt: \"Step by step, copy: {{ text }}\\nAnswer:\"}]\n")
    return tmp_path / "tasks"


def _answer(prompt: str) -> str:
    """Right on short inputs, wrong on long ones: the same for either template."""
    text = prompt.rsplit("copy: ", 1)[-1] if "copy: " in prompt else prompt.rsplit("Copy: ", 1)[-1]
    letters = text.split("\n")[0]
    return " " + letters if len(letters.split()) < 6 else " x"


def _run(tmp_path: Path, include: Path, task: str, out: str) -> Path:
    cfg = RunConfig(model="scripted:x", tasks=[task], output_dir=tmp_path / out,
                    include_paths=[include], use_cache=False)
    evaluate(cfg, model=ScriptedLM(_answer))
    return tmp_path / out


def _samples(run: Path, task: str) -> list[dict[str, object]]:
    lines = (run / "samples" / f"{task}.jsonl").read_text().splitlines()
    return [json.loads(ln) for ln in lines]


def test_a_variant_with_items_from_is_paired_item_by_item(tmp_path: Path) -> None:
    include = _folder(tmp_path, items_from=True)
    a = _run(tmp_path, include, "mine/moves", "a")
    b = _run(tmp_path, include, "mine/stepwise", "b")
    sa, sb = _samples(a, "mine/moves"), _samples(b, "mine/stepwise")
    assert [(s["id"], s["target"], s["fewshot_ids"]) for s in sa] == [
        (s["id"], s["target"], s["fewshot_ids"]) for s in sb]
    assert all(x["prompt"] != y["prompt"] for x, y in zip(sa, sb, strict=True))
    c = compare_runs(a, b)
    (t,) = c.tasks
    assert c.paired and t.overall.paired and t.task == "mine/moves vs mine/stepwise"
    assert t.overall.n_items == 36 and t.overall.diff == 0.0
    assert t.overall.a_only == t.overall.b_only == 0
    assert [b.scope for b in t.buckets] == ["2", "3", "6"] and all(b.paired for b in t.buckets)
    assert c.pooled.paired and c.pooled.n_items == 36
    back = compare_runs(b, a)  # either order
    assert back.paired and back.tasks[0].task == "mine/stepwise vs mine/moves"


def test_without_items_from_the_variant_draws_other_items(tmp_path: Path) -> None:
    include = _folder(tmp_path, items_from=False)
    a = _run(tmp_path, include, "mine/moves", "a")
    b = _run(tmp_path, include, "mine/stepwise", "b")
    assert [s["target"] for s in _samples(a, "mine/moves")] != [
        s["target"] for s in _samples(b, "mine/stepwise")]
    with pytest.raises(HarnessError, match="runs differ in tasks"):
        compare_runs(a, b)


def test_items_from_is_an_address_and_leaves_other_specs_as_they_were(tmp_path: Path) -> None:
    f = tmp_path / "t.yaml"
    f.write_text(MOVES + "items_from: moves\n")
    with pytest.raises(TaskSpecError, match="items_from: String should match pattern"):
        load_spec(f)
    f.write_text(MOVES)
    spec = load_spec(f)
    assert "items_from" not in spec.model_dump() and spec.items_from is None
    g = tmp_path / "u.yaml"
    g.write_text(MOVES + "items_from: mine/moves\n")
    with_key = load_spec(g)
    assert with_key.model_dump()["items_from"] == "mine/moves"
    assert spec_hash(with_key) != spec_hash(spec)
