"""Registered gaps: a gap registered outside the three built-ins runs on the shared context,
lands under ``gaps.extra`` of results.json (recomputable from the samples), and becomes a
leaderboard column; the built-in gaps' JSON is unchanged; unknown names in ``gaps.report`` are
one-line errors naming the key."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest
from pydantic import BaseModel

from harness.config import RunConfig
from harness.errors import HarnessError, TaskSpecError
from harness.gaps.registry import GAPS, GapContext, gap
from harness.gaps.report import GapReport, gaps_from_scores
from harness.run.evaluate import evaluate
from harness.run.results import read_samples
from harness.scoring.intervals import diff_interval, proportion, ratio_interval
from harness.scoring.report import task_reports
from harness.scoring.stats import bootstrap_means, percentile_ci, r10
from harness.spec.buckets import Bucket, build_buckets
from harness.spec.scoring import GapsSpec
from harness.spec.task import TaskSpec
from harness.tasks.loader import load_spec
from tests.fixtures.fake_model import FakeLM


class OodAccuracy(BaseModel):
    """Pooled OOD accuracy with the CI of the report's shared resamples."""

    value: float  # pooled OOD accuracy
    ci_low: float  # 2.5% quantile of the resampled OOD accuracy
    ci_high: float  # 97.5% quantile
    chance: float  # the context's chance level


@gap("test_ood_accuracy", title="OOD acc", headline=0, better="high")
def ood_accuracy(ctx: GapContext) -> OodAccuracy | None:
    """Pooled OOD accuracy (a gap for the tests)."""
    if not ctx.ids or not ctx.oods:
        return None
    _, ood_means = ctx.resampled_means
    lo, hi = percentile_ci(ood_means)
    return OodAccuracy(value=r10(math.fsum(ctx.oods) / len(ctx.oods)), ci_low=r10(lo),
                       ci_high=r10(hi), chance=ctx.chance)


class NoValue(BaseModel):
    n: int  # samples


@gap("test_no_value")
def no_value(ctx: GapContext) -> NoValue:
    """A gap whose model has no value (an error)."""
    return NoValue(n=len(ctx.ids))


BUCKETS = [Bucket(i, str(v), float(v), float(v), True, "ID" if v <= 2 else "OOD")
           for i, v in enumerate([1, 2, 3, 4])]
SCORES = [[1.0] * 8, [1.0] * 6 + [0.0] * 2, [1.0] * 4 + [0.0] * 4, [0.0] * 8]


def test_builtin_gaps_keep_their_json_and_extra_is_left_out_while_empty() -> None:
    g = gaps_from_scores(SCORES, BUCKETS, GapsSpec(bootstrap=200), seed=3)
    assert list(g.model_dump(mode="json")) == ["status", "chance", "baseline", "reason",
                                               "id_ood", "edge", "retention", "horizon"]
    assert g.extra == {} and g.id_ood is not None and g.retention is not None
    assert list(GapReport(status="floor").model_dump(mode="json"))[-1] == "horizon"


def test_id_ood_and_retention_are_score_intervals_and_resamples_stay_for_plugins() -> None:
    """The built-in intervals are closed forms of the pooled proportions (the seed changes
    nothing); the report's one draw of resampled means is still there for a plugin gap, seeded
    by the report."""
    g = gaps_from_scores(SCORES, BUCKETS, GapsSpec(bootstrap=500), seed=11)
    ids = [x for s in SCORES[:2] for x in s]
    oods = [x for s in SCORES[2:] for x in s]
    pid, pood = proportion(ids), proportion(oods)
    lo, hi = diff_interval(pid, pood)
    assert g.id_ood is not None and (g.id_ood.ci_low, g.id_ood.ci_high) == (r10(lo), r10(hi))
    lo, hi = ratio_interval(pood, pid)
    assert g.retention is not None and (g.retention.ci_low, g.retention.ci_high) == (
        r10(lo), r10(hi))
    assert gaps_from_scores(SCORES, BUCKETS, GapsSpec(bootstrap=500), seed=12) == g
    id_means, ood_means = bootstrap_means(ids, oods, seed=11, resamples=500)
    ctx = GapContext(SCORES, BUCKETS, GapsSpec(bootstrap=500), 11, 0.0)
    assert all((got == want).all() for got, want in zip(ctx.resampled_means,
                                                       (id_means, ood_means), strict=True))
    other = bootstrap_means(ids, oods, seed=12, resamples=500)
    assert not (other[0] == id_means).all()  # the draw follows the report's seed


def test_a_registered_gap_shares_the_resamples_and_goes_under_extra() -> None:
    spec = GapsSpec(report=["id_ood", "test_ood_accuracy"], bootstrap=300)
    g = gaps_from_scores(SCORES, BUCKETS, spec, seed=7, chance=0.25)
    assert g.retention is None and g.horizon is None and g.id_ood is not None
    extra = g.extra["test_ood_accuracy"]
    assert extra["value"] == 0.25 and extra["chance"] == 0.25
    assert extra["ci_low"] <= 0.25 <= extra["ci_high"]
    # the report's shared resamples: the plugin's interval is their OOD percentiles
    ctx = GapContext(SCORES, BUCKETS, spec, 7, 0.25)
    _, oods = ctx.resampled_means
    assert (extra["ci_low"], extra["ci_high"]) == tuple(r10(x) for x in percentile_ci(oods))
    assert json.loads(g.model_dump_json())["extra"]["test_ood_accuracy"] == extra
    assert GapReport.model_validate_json(g.model_dump_json()) == g
    # not measurable: no gap runs at all
    floor = gaps_from_scores([[0.0] * 8, [0.0] * 8, [1.0] * 8, [1.0] * 8], BUCKETS, spec, seed=7)
    assert floor.status == "floor" and floor.extra == {}


def test_a_gap_model_without_value_is_an_error() -> None:
    with pytest.raises(HarnessError, match="gap 'test_no_value': .* no field 'value'"):
        gaps_from_scores(SCORES, BUCKETS, GapsSpec(report=["test_no_value"]), seed=0)


def test_unknown_gap_names_are_one_line_errors(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TASK.format(data=tmp_path / "d.jsonl", report="[id_ood, retenton]"))
    with pytest.raises(TaskSpecError) as e:
        load_spec(path)
    msg = str(e.value)
    assert "\n" not in msg and "gaps.report.1: unknown gap 'retenton'" in msg
    assert "(did you mean: retention?)" in msg and "harness gaps list" in msg


TASK = """\
name: levels
description: d
source: {{type: files, path: {data}}}
fields: {{difficulty: level, id: uid}}
buckets: {{values: [1, 2, 3, 4]}}
roles: {{id_max: 2}}
templates: [{{id: a, prompt: 'Q: {{{{ q }}}}'}}]
output: {{type: generate}}
gaps: {{report: {report}}}
"""


def _run(tmp_path: Path) -> tuple[RunConfig, TaskSpec]:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"q": f"q{i}", "target": f"a{i}", "level": i % 4 + 1,
                                        "uid": f"u{i:02d}"}) + "\n" for i in range(40)))
    tdir = tmp_path / "tasks" / "mine"
    tdir.mkdir(parents=True)
    path = tdir / "levels.yaml"
    path.write_text(TASK.format(data=data, report="[id_ood, test_ood_accuracy, retention]"))

    def answer(prompt: str) -> str:  # right on levels 1-3 and on half of level 4
        i = int(prompt.split("q")[-1])
        return f" a{i}" if i % 4 < 3 or i % 8 == 3 else " x"

    cfg = RunConfig.model_validate(dict(model="fake:x", tasks=["mine/levels"], seed=0,
                                        include_paths=[tmp_path / "tasks"],
                                        output_dir=tmp_path / "run"))
    evaluate(cfg, model=FakeLM(answer))
    return cfg, load_spec(path)


def test_a_registered_gap_in_results_and_on_the_leaderboard(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build

    cfg, spec = _run(tmp_path)
    res = json.loads((cfg.output_dir / "results.json").read_text())
    (task,) = res["tasks"]
    gaps = task["templates"][0]["gaps"]
    assert list(gaps) == ["status", "chance", "baseline", "reason", "id_ood", "edge",
                          "retention", "horizon", "extra"]
    assert gaps["horizon"] is None and gaps["extra"]["test_ood_accuracy"]["value"] == 0.75
    # recomputable from the samples file alone
    samples = read_samples(cfg.output_dir / task["samples_file"])
    (again,) = task_reports(samples, build_buckets(spec.buckets, spec.roles), spec.gaps, seed=0,
                            metric=spec.scoring.metric, extract=spec.scoring.extract)
    assert again.gaps.model_dump(mode="json") == gaps

    out = tmp_path / "board"
    build([cfg.output_dir], out, png=False)
    board = json.loads((out / "leaderboard.json").read_text())
    (entry,) = board["entries"]
    assert entry["gaps"] == {"test_ood_accuracy": 0.75} and entry["gaps_n"] == {
        "test_ood_accuracy": 1}
    (row,) = board["tasks"][0]["rows"]
    assert row["gaps"]["test_ood_accuracy"]["value"] == 0.75
    with (out / "leaderboard.csv").open() as f:
        (line,) = list(csv.DictReader(f))
    assert float(line["test_ood_accuracy"]) == 0.75 and line["test_ood_accuracy_tasks"] == "1"
    md = (out / "leaderboard.md").read_text()
    assert "| test_ood_accuracy ↑ |" in md and "0.75 (1)" in md  # not a built-in: the defaults
    index = (out / "index.html").read_text()
    assert 'data-better="high">test_ood_accuracy ↑</th>' in index
    task_page = next((out / "tasks").glob("*.html")).read_text()
    assert ">test_ood_accuracy ↑</th>" in task_page and "0.75" in task_page


def test_a_gap_declared_in_the_harness_shows_its_metadata(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Title, headline and direction reach the board where the gap is the harness's own (a
    plugin's metadata is not read, so a board does not depend on what is installed)."""
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build

    cfg, _ = _run(tmp_path)
    builtin = GAPS.is_builtin
    monkeypatch.setattr(GAPS, "is_builtin", lambda n: n == "test_ood_accuracy" or builtin(n))
    out = tmp_path / "board"
    build([cfg.output_dir], out, png=False)
    assert "| OOD acc ↑ |" in (out / "leaderboard.md").read_text()
    assert 'data-better="high">OOD acc ↑</th>' in (out / "index.html").read_text()
