"""Issue 33: what the committed boards claim survives a reviewer: every summary block in README
and docs is what the board's leaderboard.json gives, the floor count is recomputed from the
samples (issue 45: leave-one-out baselines of the extracted answers, judged on every template),
no interval is of zero width, and the headline gap covers the same tasks per group."""

from __future__ import annotations

import gzip
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.answers.metrics import get_metric
from harness.leaderboard.inputs import load_leaderboard
from harness.leaderboard.summary import blocks, summary_md
from harness.scoring.aggregates import not_above
from harness.scoring.baselines import answer_key, constant_baseline
from harness.scoring.records import SampleRecord
from harness.spec.scoring import ExtractSpec

ROOT = Path(__file__).resolve().parents[2]
BOARDS = ROOT / "leaderboards"
CURRENT = [n for n, b in json.loads((BOARDS / "manifest.json").read_text())["boards"].items()
           if b["status"] == "current"]
DOCS = [ROOT / "README.md", BOARDS / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_summary_block_is_what_its_board_gives() -> None:
    found = 0
    for path in DOCS:
        for name, text in blocks(path.read_text(encoding="utf-8")):
            board = load_leaderboard(BOARDS / name / "leaderboard.json")
            assert text == summary_md(board), (
                f"{path.relative_to(ROOT)}: the summary of {name} is out of date: run harness "
                f"leaderboard summary leaderboards/{name} --into {path.relative_to(ROOT)}")
            found += 1
    assert found >= 2  # leaderboards/README.md and docs/leaderboards.md carry offline-small's


def _walk(x: Any, where: str) -> Iterator[tuple[str, float, float]]:
    if isinstance(x, dict):
        lo, hi = x.get("ci_low"), x.get("ci_high")
        if isinstance(lo, int | float) and isinstance(hi, int | float):
            yield where, float(lo), float(hi)
        for k, v in x.items():
            yield from _walk(v, f"{where}.{k}")
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from _walk(v, f"{where}[{i}]")


def test_no_committed_interval_has_zero_width() -> None:
    files = [*BOARDS.rglob("results.json"), *BOARDS.rglob("leaderboard.json")]
    assert len(files) > 50
    bad = [f"{f.relative_to(ROOT)}{w}: [{lo}, {hi}]" for f in files
           for w, lo, hi in _walk(json.loads(f.read_text()), "") if not hi > lo]
    assert not bad, f"{len(bad)} intervals of zero width, e.g. {bad[:3]}"


def test_no_published_input_was_run_from_a_dirty_checkout_but_those_named() -> None:
    """The four reference-board inputs that ran from a dirty tree are retrained under issue 35;
    nothing else may be (offline-small's runs name a clean commit)."""
    dirty = sorted(str(f.relative_to(BOARDS)).split("/")[0] for f in BOARDS.rglob("results.json")
                   if json.loads(f.read_text())["harness"].get("git_dirty"))
    assert "offline-small" not in dirty
    assert len([d for d in dirty if d == "reference-board"]) <= 4


def _reports(path: Path) -> list[list[SampleRecord]]:
    """The ID samples of each report of a task (template and condition, in file order; the
    first is the primary report's), leaving out reports without ID samples."""
    records = [SampleRecord.model_validate_json(line)
               for line in gzip.decompress(path.read_bytes()).splitlines() if line.strip()]
    groups: dict[tuple[str, str], list[SampleRecord]] = {}
    for r in records:
        groups.setdefault((r.template, r.condition), []).append(r)
    return [[r for r in g if r.role == "ID"] for g in groups.values()]


@pytest.mark.parametrize("name", [n for n in CURRENT if n == "offline-small"])
def test_floor_count_is_recomputed_from_the_samples(name: str) -> None:
    """A task is at the floor when its primary report's pooled ID accuracy is not above its
    baseline, or its ID accuracy pooled over every report is not (``scoring/floors``: the
    interval over the items, the level the largest of the reports')."""
    board = load_leaderboard(BOARDS / name / "leaderboard.json")
    for e in board.entries:
        floors = 0
        for t in board.tasks:
            [row] = [r for r in t.rows if r.entry == e.id]
            assert row.samples is not None
            reports = _reports(BOARDS / name / row.samples)
            if not reports[0]:  # a task evaluating OOD only (math_sgr): no floor to be at
                assert row.status != "floor"
                continue
            res = json.loads((BOARDS / name / row.source).read_text())
            scoring = next(x["spec"]["scoring"] for x in res["tasks"] if x["task"] == t.task)
            metric = get_metric(scoring["metric"])
            extract = ExtractSpec.model_validate(scoring.get("extract", {}))
            judged = []  # (correct, n, level) of each report with ID samples
            for ids in (r for r in reports if r):
                base = constant_baseline([answer_key(r) for r in ids], metric, extract)
                assert base is not None
                chance = math.fsum(1 / len(r.choices) for r in ids if r.choices) / len(ids)
                judged.append((math.fsum(r.score for r in ids), len(ids), max(base, chance)))
                if ids is reports[0]:
                    assert row.baseline is not None
                    assert math.isclose(base, row.baseline, abs_tol=1e-9), (e.id, t.task)
            floor = not_above(*judged[0])
            if len(judged) > 1:
                items = max(n for _, n, _ in judged)
                share = math.fsum(c for c, _, _ in judged) / sum(n for _, n, _ in judged)
                floor = floor or not_above(share * items, items, max(x for _, _, x in judged))
            assert floor == (row.status == "floor"), (e.id, t.task)
            floors += floor
        assert floors == e.n_floor, e.id


@pytest.mark.parametrize("name", CURRENT)
def test_headline_gap_covers_the_tasks_measured_for_every_entry_of_its_group(name: str) -> None:
    board = load_leaderboard(BOARDS / name / "leaderboard.json")
    for g in {e.group for e in board.entries}:
        members = [e for e in board.entries if e.group == g]
        measured = [{t.task for t in board.tasks for r in t.rows
                     if r.entry == e.id and r.gap is not None} for e in members]
        common = set.intersection(*measured)
        for e in members:
            assert e.n_gap_tasks == len(common)
            gaps = [r.gap for t in board.tasks for r in t.rows
                    if r.entry == e.id and t.task in common and r.gap is not None]
            if gaps:
                assert e.gap is not None
                assert math.isclose(e.gap, math.fsum(gaps) / len(gaps), abs_tol=1e-9)


@pytest.mark.parametrize("name", [n for n in CURRENT if n == "offline-small"])
def test_every_task_with_exemplars_shows_difficulty_plus_shift_adding_up_to_its_gap(
        name: str) -> None:
    board = load_leaderboard(BOARDS / name / "leaderboard.json")
    split = 0
    for t in board.tasks:
        for r in t.rows:
            if not r.exemplars or r.gap is None:
                assert r.difficulty is None and r.shift is None
                continue
            assert r.difficulty is not None and r.shift is not None, (r.entry, t.task)
            assert math.isclose(r.difficulty.value + r.shift.value, r.gap, abs_tol=1e-9)
            assert r.difficulty.ci_low < r.difficulty.ci_high
            assert r.shift.ci_low <= r.shift.value <= r.shift.ci_high
            assert r.shift.ci_low < r.shift.ci_high
            split += 1
    assert split > 0
