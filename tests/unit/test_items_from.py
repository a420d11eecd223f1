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
from harness.leaderboard.paired import compare_runs
from harness.run.evaluate import evaluate
from harness.run.results import spec_hash
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
    with pytest.raises(TaskSpecError,
                       match="items_from: 'moves' is not a task address: write NAMESPACE/TASK"):
        load_spec(f)
    f.write_text(MOVES)
    spec = load_spec(f)
    assert "items_from" not in spec.model_dump() and spec.items_from is None
    g = tmp_path / "u.yaml"
    g.write_text(MOVES + "items_from: mine/moves\n")
    with_key = load_spec(g)
    assert with_key.model_dump()["items_from"] == "mine/moves"
    assert spec_hash(with_key) != spec_hash(spec)


def _variant(tmp_path: Path, body: str) -> tuple[Path, Path]:
    """mine/moves and a variant mine/stepwise of it (``body``: its keys after items_from)."""
    include = _folder(tmp_path, items_from=False)
    f = include / "mine" / "stepwise.yaml"
    f.write_text("include: moves.yaml\nname: stepwise\nitems_from: mine/moves\n" + body)
    return include, f


@pytest.mark.parametrize(("body", "says"), [
    ("source: {params: {alphabet: abc}}\n",
     'source differs from mine/moves\'s (source.params.alphabet "abc" here, (unset) in '
     "mine/moves), so its items would not be mine/moves's, though they carry its item ids; "
     "give it mine/moves's source, or remove items_from"),
    ("source: {seed: 3}\n", "source differs from mine/moves's (source.seed 3 here, 0 in "
                            "mine/moves)"),
    ("buckets: {values: [2, 3, 8]}\n",
     "buckets differ from mine/moves's (buckets.values [2, 3, 8] here, [2, 3, 6] in "
     "mine/moves)"),
    ("source: {type: files, path: data.jsonl}\n",
     'source differs from mine/moves\'s (source.type "files" here, "generator" in mine/moves)'),
])
def test_a_variant_whose_items_would_differ_from_the_named_tasks_is_refused(
        tmp_path: Path, body: str, says: str) -> None:
    """Items are seeded by the named task's address but made from the variant's own source and
    buckets: where these differ, the variant's items carry the named task's ids without being
    its items, and compare could pair other questions as one. validate and eval refuse it, in
    one line at the items_from key (line 3), before any model loads."""
    from typer.testing import CliRunner

    from harness.cli.main import app

    include, f = _variant(tmp_path, body)
    (include / "mine" / "data.jsonl").write_text('{"text": "a", "target": "a", "length": 2}\n')
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(include)])
    errors = [ln for ln in r.output.splitlines() if ln.startswith("error:")]
    assert r.exit_code == 2 and len(errors) == 1, r.output
    assert errors[0].startswith(f"error: {f}:3: items_from: {says}"), errors[0]
    assert f"ok: {include / 'mine' / 'moves.yaml'}" in r.output
    model = ScriptedLM("x")
    cfg = RunConfig(model="scripted:x", tasks=["mine/stepwise"], output_dir=tmp_path / "run",
                    include_paths=[include], use_cache=False)
    with pytest.raises(HarnessError) as e:
        evaluate(cfg, model=model)
    assert str(e.value).splitlines()[0] == errors[0].removeprefix("error: ")
    assert "no model was loaded" in str(e.value) and not model.prompts


def test_a_variant_may_change_what_is_asked_but_not_the_items(tmp_path: Path) -> None:
    """Templates, exemplars (fewshot) and the number of items per bucket (item j of a bucket is
    the same item whatever the count) may differ from the named task's."""
    from typer.testing import CliRunner

    from harness.cli.main import app

    include, f = _variant(tmp_path, "fewshot: {k: 0}\nsource: {per_bucket: 3}\n"
                          "output: {max_tokens: 5}\n")
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(include)])
    assert r.exit_code == 0, r.output
    a = _run(tmp_path, include, "mine/moves", "a")
    b = _run(tmp_path, include, "mine/stepwise", "b")
    sa, sb = _samples(a, "mine/moves"), _samples(b, "mine/stepwise")
    assert len(sb) == 9 and all(s["fewshot_ids"] == [] for s in sb)
    first = {s["id"]: s["target"] for s in sa}
    assert all(first[s["id"]] == s["target"] for s in sb)


def test_items_from_names_a_task_that_evaluates_its_own_items(tmp_path: Path) -> None:
    """An address that is no task, or a task that takes its items from a third: one line each,
    with close names and where the task was looked for."""
    from typer.testing import CliRunner

    from harness.cli.main import app

    include, f = _variant(tmp_path, "")
    (include / "mine" / "third.yaml").write_text(
        "include: moves.yaml\nname: third\nitems_from: mine/stepwise\n")
    (include / "mine" / "typo.yaml").write_text(
        "include: moves.yaml\nname: typo\nitems_from: mine/movs\n")
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(include)])
    errors = sorted(ln for ln in r.output.splitlines() if ln.startswith("error:"))
    third, typo = include / "mine" / "third.yaml", include / "mine" / "typo.yaml"
    assert errors == [
        f"error: {third}:3: items_from: mine/stepwise evaluates the items of mine/moves (its "
        "own items_from), so name mine/moves here",
        f"error: {typo}:3: items_from: no task 'mine/movs' (did you mean: mine/moves?) (looked "
        "for it in the folders above this file and among built-in and installed tasks)"]
    cfg = RunConfig(model="scripted:x", tasks=["mine/typo"], output_dir=tmp_path / "run",
                    include_paths=[include], use_cache=False)
    with pytest.raises(HarnessError, match=r"typo.yaml:3: items_from: no task 'mine/movs' "
                       r"\(did you mean: mine/moves.*--include-path\)"):
        evaluate(cfg, model=ScriptedLM("x"))


def test_validate_finds_the_named_task_in_a_plugin_packages_own_folder(tmp_path: Path) -> None:
    """A package's tasks folder is addressed by its entry-point name (mybench/moves for
    tasks/moves.yaml), which validate, given the folder alone, does not know: the named task is
    then looked for without its namespace, in the folders above the variant."""
    from typer.testing import CliRunner

    from harness.cli.main import app

    folder = tmp_path / "src" / "pkg" / "tasks"
    folder.mkdir(parents=True)
    (folder / "moves.yaml").write_text(MOVES)
    (folder / "steps.yaml").write_text("include: moves.yaml\nname: steps\nitems_from: "
                                       "mybench/moves\nbuckets: {values: [2, 3]}\n")
    r = CliRunner().invoke(app, ["tasks", "validate", "--no-items", str(folder)])
    assert r.exit_code == 2 and r.output.splitlines()[-1].startswith(
        f"error: {folder / 'steps.yaml'}:3: items_from: buckets differ from mybench/moves's "
        "(buckets.values [2, 3] here, [2, 3, 6] in mybench/moves)"), r.output
