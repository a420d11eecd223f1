"""The cost table behind ``harness leaderboard plan`` (issue 25): CPU seconds per task measured by
a real run at its own size, never from a run answered from the cache, scaled by prompts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.cli.main import app
from harness.config import RunConfig
from harness.errors import HarnessError
from harness.leaderboard.costs import CostTable, TaskCost, add_runs, estimate, measured, read_table
from harness.models import backends
from harness.run.evaluate import evaluate
from harness.testing import scripted_backend

TASK = "lengthgen/copy"


def _run(tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch,
         use_cache: bool = True) -> Path:
    monkeypatch.setitem(backends.BACKENDS.items, "scripted", scripted_backend)
    cfg = RunConfig(model="scripted:abc", tasks=[TASK], limit_per_bucket=3, seed=0,
                    cache_dir=tmp_path / "cache", output_dir=tmp_path / name,
                    use_cache=use_cache)
    evaluate(cfg)
    return tmp_path / name


def test_a_fresh_run_is_measured_and_a_cached_one_is_not(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    first = _run(tmp_path, "first", monkeypatch)
    spec, costs, skipped = measured(first)
    res = json.loads((first / "results.json").read_text())
    samples = (first / res["tasks"][0]["samples_file"]).read_text().splitlines()
    assert spec == "scripted:abc" and skipped == [] and list(costs) == [TASK]
    cost = costs[TASK]
    assert cost.prompts == len(samples) > 0 and cost.limit == 3
    assert cost.cpu_s >= 0 and cost.load_avg is not None and cost.engine.startswith("scripted")
    assert cost.spec_sha256 == res["tasks"][0]["spec_sha256"]  # the task file it ran under
    again = _run(tmp_path, "again", monkeypatch)  # every response comes from the cache now
    _, costs2, skipped2 = measured(again)
    assert costs2 == {} and skipped2 == [f"{TASK}: {len(samples)} responses came from the cache"]
    table, notes = add_runs(CostTable(), [first, again])
    assert table.models["scripted:abc"][TASK] == cost and len(notes) == 1
    # --no-cache: nothing is answered from a cache, so the run is measured (a re-timing)
    fresh = _run(tmp_path, "fresh", monkeypatch, use_cache=False)
    _, costs3, skipped3 = measured(fresh)
    assert skipped3 == [] and costs3[TASK].prompts == cost.prompts


def test_estimates_scale_by_prompts_and_name_what_is_missing() -> None:
    cost = TaskCost(limit=10, prompts=40, cpu_s=100.0, wall_s=120.0, load_avg=0.5, engine="hf")
    table = CostTable(models={"hf:m": {"a/x": cost}})
    est, missing = estimate(table, "hf:m", [("a/x", 80), ("a/y", 10)])
    assert est == {"a/x": 200.0} and missing == ["a/y"]
    assert estimate(table, "hf:other", [("a/x", 80)]) == ({}, ["a/x"])


def test_plan_prints_the_measured_cost_per_task(tmp_path: Path) -> None:
    from harness.leaderboard.plan import plan_tasks

    table = tmp_path / "costs.json"
    cost = TaskCost(limit=plan_tasks([TASK])[0].limit, prompts=186, cpu_s=3600.0, wall_s=3700.0,
                    load_avg=1.0, engine="hf")  # timed at the plan's own size: no mark
    table.write_text(CostTable(models={"hf:m": {TASK: cost}}).model_dump_json())
    out = CliRunner().invoke(app, ["leaderboard", "plan", "--tasks", f"{TASK},lengthgen/sort",
                                   "--costs", str(table)])
    assert out.exit_code == 0, out.output
    lines = {ln.split()[0]: ln for ln in out.output.splitlines() if ln.startswith("lengthgen/")}
    assert "[1] 1 h" in lines[TASK] and "[1] not measured" in lines["lengthgen/sort"]
    hours = 3600.0 * plan_tasks([TASK])[0].prompts / 186 / 3600  # the cost scales by prompts
    assert f"hf:m: {hours:.1f} core-h at least (1 of 2 tasks not measured)" in out.output


def test_plan_marks_a_cost_timed_at_another_size(tmp_path: Path) -> None:
    from harness.leaderboard.costs import scaled_mark
    from harness.leaderboard.plan import plan_tasks

    limit = plan_tasks([TASK])[0].limit
    assert limit is not None
    small = TaskCost(limit=4, prompts=24, cpu_s=60.0, wall_s=61.0, load_avg=1.0, engine="q")
    table = tmp_path / "costs.json"
    table.write_text(CostTable(models={"q:m": {TASK: small}}).model_dump_json())
    out = CliRunner().invoke(app, ["leaderboard", "plan", "--tasks", TASK, "--costs", str(table)])
    assert out.exit_code == 0, out.output
    line = next(ln for ln in out.output.splitlines() if ln.startswith(TASK))
    assert "[1] <=" in line and "'<=' scaled from a smaller run" in out.output
    assert scaled_mark(small.model_copy(update={"limit": limit}), limit) == ""
    assert scaled_mark(small.model_copy(update={"limit": None}), limit) == ">="
    assert scaled_mark(small, None) == "<=" and scaled_mark(None, limit) == ""


def test_a_cost_timed_under_another_task_file_is_not_measured(tmp_path: Path) -> None:
    """A task file change (a larger answer budget, say) can change a task's cost many times
    over: an entry recorded under another spec hash than today's counts as not measured, in
    the estimate and for --retime; an entry from before hashes were recorded still counts."""
    from harness.leaderboard.plan import plan_tasks

    (plan,) = plan_tasks([TASK])
    cost = TaskCost(limit=plan.limit, prompts=186, cpu_s=3600.0, wall_s=3700.0, load_avg=1.0,
                    engine="hf")
    for spec, measured_now in ((plan.spec_sha256, True), ("0" * 64, False), (None, True)):
        table = tmp_path / "costs.json"
        entry = cost.model_copy(update={"spec_sha256": spec})
        table.write_text(CostTable(models={"hf:m": {TASK: entry}}).model_dump_json())
        out = CliRunner().invoke(app, ["leaderboard", "plan", "--tasks", TASK,
                                       "--costs", str(table)])
        assert out.exit_code == 0, out.output
        line = next(ln for ln in out.output.splitlines() if ln.startswith(TASK))
        assert ("not measured" not in line) == measured_now, (spec, line)
        left = CliRunner().invoke(app, ["leaderboard", "plan", "--tasks", TASK, "--costs",
                                        str(table), "--groups", "--unmeasured", "hf:m"])
        assert (left.output.strip() == "") == measured_now, (spec, left.output)


def test_groups_of_the_unmeasured_tasks_are_what_retime_runs(tmp_path: Path) -> None:
    table = tmp_path / "costs.json"
    cost = TaskCost(limit=31, prompts=186, cpu_s=60.0, wall_s=61.0, load_avg=1.0, engine="hf")
    table.write_text(CostTable(models={"hf:m": {TASK: cost}}).model_dump_json())
    base = ["leaderboard", "plan", "--tasks", f"{TASK},lengthgen/sort", "--costs", str(table),
            "--groups"]
    everything = CliRunner().invoke(app, base)
    assert everything.exit_code == 0 and f"{TASK}," in everything.output
    left = CliRunner().invoke(app, [*base, "--unmeasured", "hf:m"])
    assert left.exit_code == 0 and left.output.split()[1:] == ["lengthgen/sort"]
    other = CliRunner().invoke(app, [*base, "--unmeasured", "hf:other"])  # nothing measured
    assert other.output == everything.output
    wrong = CliRunner().invoke(app, base[:-1] + ["--unmeasured", "hf:m"])
    assert wrong.exit_code != 0 and "--unmeasured: only with --groups" in str(wrong.exception)


def test_a_bad_cost_table_is_one_line_naming_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "costs.json"
    bad.write_text('{"models": {"m": {"t": {"cpu_s": "lots"}}}}')
    with pytest.raises(HarnessError) as e:
        read_table(bad)
    assert str(e.value) == f"{bad}: not a cost table: models.m.t.limit: Field required"
    with pytest.raises(HarnessError, match="no such cost table"):
        read_table(tmp_path / "absent.json")
