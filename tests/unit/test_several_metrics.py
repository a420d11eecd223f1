"""Several metrics per task (``scoring.metrics``): the first is the primary one (gaps, baselines,
the board's scores); every other is computed per sample from the same extracted answer and
reported per bucket and role, with intervals, in results.json, the eval table and the board's
task page. Single-metric tasks keep every byte."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError
from rich.console import Console

from harness.answers.metrics import METRICS, metric
from harness.cli.run_tables import print_results
from harness.config import RunConfig
from harness.errors import TaskSpecError
from harness.run.evaluate import evaluate
from harness.run.rescore import rescored
from harness.run.results import Results, read_samples
from harness.scoring.report import task_reports
from harness.scoring.stats import r10, wilson_interval
from harness.spec.buckets import build_buckets
from harness.spec.scoring import ScoringSpec
from harness.spec.task import TaskSpec
from harness.tasks.loader import load_spec
from harness.testing import ScriptedLM
from tests.helpers import forget

TASK = """\
name: levels
description: d
source: {{type: files, path: {data}}}
fields: {{difficulty: level, id: uid}}
buckets: {{values: [1, 2, 3, 4]}}
roles: {{id_max: 2}}
templates: [{{id: a, prompt: 'Q: {{{{ q }}}}'}}]
output: {{type: generate}}
scoring: {scoring}
"""
SEVERAL = "{metrics: [exact_match, normalized_match, t47_half]}"


def _half(extracted: str, target: str) -> float:
    """A plugin-style partial-credit metric: 1 exact, 0.5 equal but for case and a dot."""
    if extracted.strip() == target.strip():
        return 1.0
    return 0.5 if extracted.strip().lower().rstrip(".") == target.strip().lower() else 0.0


@pytest.fixture
def _half_metric() -> Iterator[None]:
    metric("t47_half")(_half)
    yield
    forget(METRICS, "t47_half")


def _answer(prompt: str) -> str:
    """Right on levels 1-2, right but for case and a dot on level 3, wrong on level 4."""
    i = int(prompt.split("q")[-1])
    level = i % 4 + 1
    return f" a{i}" if level <= 2 else f" A{i}." if level == 3 else " x"


def _run(tmp_path: Path, scoring: str, name: str = "run") -> tuple[RunConfig, TaskSpec]:
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"q": f"q{i}", "target": f"a{i}", "level": i % 4 + 1,
                                        "uid": f"u{i:02d}"}) + "\n" for i in range(40)))
    tdir = tmp_path / name / "tasks" / "mine"
    tdir.mkdir(parents=True)
    path = tdir / "levels.yaml"
    path.write_text(TASK.format(data=data, scoring=scoring))
    cfg = RunConfig.model_validate(dict(model="scripted:x", tasks=["mine/levels"], seed=0,
                                        include_paths=[tmp_path / name / "tasks"],
                                        output_dir=tmp_path / name / "out", use_cache=False))
    evaluate(cfg, model=ScriptedLM(_answer))
    return cfg, load_spec(path)


def _accuracies(rows: list[dict[str, Any]]) -> list[float | None]:
    return [r["accuracy"] for r in rows]


@pytest.mark.usefixtures("_half_metric")
def test_every_metric_per_bucket_and_role_in_results_with_intervals(tmp_path: Path) -> None:
    cfg, spec = _run(tmp_path, SEVERAL)
    assert spec.scoring.metric == "exact_match"  # the first is the primary
    res = json.loads((cfg.output_dir / "results.json").read_text())
    (task,) = res["tasks"]
    (rep,) = task["templates"]
    assert _accuracies(rep["buckets"]) == [1.0, 1.0, 0.0, 0.0]
    assert rep["gaps"]["id_ood"]["value"] == 1.0  # the gaps are the primary metric's
    assert [m["metric"] for m in rep["metrics"]] == ["normalized_match", "t47_half"]
    normalized, half = rep["metrics"]
    assert _accuracies(normalized["buckets"]) == [1.0, 1.0, 1.0, 0.0]
    assert _accuracies(half["buckets"]) == [1.0, 1.0, 0.5, 0.0]
    assert [(r["role"], r["accuracy"]) for r in half["roles"]] == [("ID", 1.0), ("OOD", 0.25)]
    # the primary metric's intervals: Wilson on the bucket's sum of scores
    third = half["buckets"][2]
    assert (third["n"], third["correct"]) == (10, 5.0)
    assert (third["ci_low"], third["ci_high"]) == tuple(r10(x) for x in wilson_interval(5.0, 10))
    ood = normalized["roles"][1]
    assert (ood["ci_low"], ood["ci_high"]) == tuple(r10(x) for x in wilson_interval(10.0, 20))


@pytest.mark.usefixtures("_half_metric")
def test_samples_carry_every_score_and_recompute_the_reports(tmp_path: Path) -> None:
    cfg, spec = _run(tmp_path, SEVERAL)
    results = Results.model_validate_json((cfg.output_dir / "results.json").read_text())
    (task,) = results.tasks
    samples = read_samples(cfg.output_dir / task.samples_file)
    level3 = next(s for s in samples if s.bucket == "3")
    assert level3.score == 0.0 and level3.scores == {"normalized_match": 1.0, "t47_half": 0.5}
    line = (cfg.output_dir / task.samples_file).read_text().splitlines()[0]
    assert '"scores": {"normalized_match": 1.0, "t47_half": ' in line
    again = task_reports(samples, build_buckets(spec.buckets, spec.roles), spec.gaps, 0,
                         spec.scoring.metric, spec.scoring.extra_metrics, spec.scoring.extract)
    assert again == task.templates
    # harness rescore gives the same bytes
    redone = rescored(cfg.output_dir)
    assert redone.model_dump(mode="json") == results.model_dump(mode="json")


@pytest.mark.usefixtures("_half_metric")
def test_the_eval_table_shows_every_metric(tmp_path: Path) -> None:
    cfg, _ = _run(tmp_path, SEVERAL)
    results = Results.model_validate_json((cfg.output_dir / "results.json").read_text())
    console = Console(record=True, width=160)
    print_results(results, console)
    text = console.export_text()
    assert "other metrics (scoring.metrics)" in text
    assert "normalized_match acc %" in text and "t47_half score %" in text
    row = next(line for line in text.splitlines() if line.strip().startswith("│ 3 ")
               and "50.0" in line)
    assert "100.0" in row and "[23.7, 76.3]" in row  # normalized 10/10, half 5/10 with CI


@pytest.mark.usefixtures("_half_metric")
def test_the_board_task_page_shows_every_metric(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build

    cfg, _ = _run(tmp_path, SEVERAL)
    out = tmp_path / "board"
    build([cfg.output_dir], out, png=False)
    board = json.loads((out / "leaderboard.json").read_text())
    (t,) = board["tasks"]
    assert t["metric"] == ("exact_match (primary; also normalized_match, t47_half) on generate "
                           "output")
    (row,) = t["rows"]
    assert [c["accuracy"] for c in row["buckets"]] == [1.0, 1.0, 0.0, 0.0]
    assert [c["accuracy"] for c in row["metrics"]["t47_half"]["buckets"]] == [1.0, 1.0, 0.5, 0.0]
    assert [c["label"] for c in row["metrics"]["normalized_match"]["roles"]] == ["ID", "OOD"]
    page = next((out / "tasks").glob("*.html")).read_text()
    assert "Other metric: normalized_match" in page and "Other metric: t47_half" in page
    half = page.split('id="metric-t47_half-buckets"')[1].split("</table>")[0]
    assert "50.0 <small" in half and "[23.7, 76.3]" in half
    md = (out / "leaderboard.md").read_text()
    assert "| t47_half ID | t47_half OOD |" in md and "| 25.0 [" in md


def test_a_single_metric_task_keeps_its_keys(tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    from harness.leaderboard.build import build

    cfg, spec = _run(tmp_path, "{metric: exact_match}")
    text = (cfg.output_dir / "results.json").read_text()
    res = json.loads(text)
    (task,) = res["tasks"]
    assert "metrics" not in task["spec"]["scoring"] and "metrics" not in task["templates"][0]
    assert '"scores"' not in (cfg.output_dir / task["samples_file"]).read_text()
    out = tmp_path / "board"
    build([cfg.output_dir], out, png=False)
    (row,) = json.loads((out / "leaderboard.json").read_text())["tasks"][0]["rows"]
    assert "metrics" not in row
    assert "Other metric" not in next((out / "tasks").glob("*.html")).read_text()
    md = (out / "leaderboard.md").read_text()
    assert "Metric: exact_match on generate output." in md and "| OOD |" in md
    assert "| exact_match OOD |" not in md


def test_metrics_alone_sets_the_primary_and_reads_back() -> None:
    sc = ScoringSpec.model_validate({"metrics": ["numeric_match", "exact_match"]})
    assert sc.metric == "numeric_match" and sc.extra_metrics == ["exact_match"]
    assert ScoringSpec.model_validate(sc.model_dump(mode="json")) == sc
    assert "metrics" not in ScoringSpec().model_dump(mode="json")
    assert ScoringSpec(metric="numeric_match").extra_metrics == []


@pytest.mark.parametrize(("scoring", "needle"), [
    ({"metric": "numeric_match", "metrics": ["exact_match", "numeric_match"]},
     "metric 'numeric_match' and metrics ['exact_match', 'numeric_match']: the first of metrics "
     "is the primary metric"),
    ({"metrics": ["exact_match", "exact_match"]}, "metrics: 'exact_match' given twice"),
    ({"metrics": []}, "metrics: give at least one metric"),
])
def test_conflicting_duplicate_or_empty_metrics_are_refused(scoring: dict[str, Any],
                                                            needle: str) -> None:
    with pytest.raises(ValidationError, match="metrics") as e:
        ScoringSpec.model_validate(scoring)
    assert needle in str(e.value)


def test_metric_given_as_the_first_of_metrics_is_accepted() -> None:
    sc = ScoringSpec.model_validate({"metric": "exact_match",
                                     "metrics": ["exact_match", "numeric_match"]})
    assert sc.metric == "exact_match"


MC = """\
name: mc
description: d
source: {{type: files, path: d.jsonl}}
buckets: {{values: [1, 2]}}
roles: {{id_max: 1}}
templates: [{{id: a, prompt: 'Q: {{{{ q }}}}'}}]
output: {{type: multiple_choice, choices: [a, b]}}
scoring: {scoring}
"""


def test_multiple_choice_tasks_refuse_several_metrics(tmp_path: Path) -> None:
    path = tmp_path / "mc.yaml"
    path.write_text(MC.format(scoring="{metrics: [exact_match, normalized_match]}"))
    with pytest.raises(TaskSpecError) as e:
        load_spec(path)
    (line,) = [x for x in str(e.value).splitlines() if "scoring.metrics" in x]
    assert "a multiple_choice task is scored by its most likely choice" in line


def test_validate_names_each_unknown_metric_with_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text(TASK.format(data=tmp_path / "d.jsonl",
                                scoring="{metrics: [exact_match, normalised_match]}"))
    with pytest.raises(TaskSpecError) as e:
        load_spec(path)
    msg = str(e.value)
    assert "scoring.metrics.1: unknown metric 'normalised_match'" in msg
    assert "(did you mean: normalized_match" in msg and "\n" not in msg
