"""Recompute a finished run's numbers from its per-sample files: ``harness rescore RUN_DIR``.

Every number in results.json comes from the samples files (``scoring/report``, the analyses, the
horizon search's answers), so a run made under an older results schema (older intervals, say)
is brought up to date without asking the model anything: the bucket tables (each metric's, where
the task has several), gaps, analyses and horizon estimates (``run/horizon.recomputed``) of each
task are computed again from its samples (checked against the recorded
``samples_sha256`` first) with the task's recorded spec and the run's seed, and results.json is
rewritten atomically at the current schema version; everything else in it (the run's options,
model, environment, timings) is kept as it was.
Rescoring a run of the current version gives it back byte for byte.

A board's copy of a run keeps its samples as ``<samples_file>.gz``; that copy is read too.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.analyses.registry import run_analyses
from harness.errors import HarnessError, first_problem
from harness.run.results import SCHEMA_VERSION, HorizonResult, Results, write_results
from harness.scoring.records import SampleRecord
from harness.scoring.report import record_splits, task_reports
from harness.spec.buckets import Bucket
from harness.spec.task import TaskSpec


def task_records(run_dir: Path, task: dict[str, Any]) -> list[SampleRecord]:
    """A task's sample records (``task``: its entry in the run's results.json), checked against
    ``samples_sha256``; a board's gzip copy is read too."""
    name = f"{run_dir / 'results.json'}: task {task.get('task')!r}"
    return _records(run_dir, str(task.get("samples_file", "")), task.get("samples_sha256"), name)


def _records(run_dir: Path, rel: str, expected: str | None, name: str) -> list[SampleRecord]:
    plain, packed = run_dir / rel, run_dir / (rel + ".gz")
    for path in (plain, packed):
        if not path.resolve().is_relative_to(run_dir.resolve()):
            raise HarnessError(f"{name}: samples_file {rel!r} is outside the run folder")
    if not rel or not (plain.is_file() or packed.is_file()):
        raise HarnessError(f"{name}: no samples file {rel!r} (nor {rel}.gz) to rescore from")
    data = plain.read_bytes() if plain.is_file() else gzip.decompress(packed.read_bytes())
    h = hashlib.sha256(data)
    if expected is not None and h.hexdigest() != expected:
        raise HarnessError(f"{name}: the samples file's sha256 {h.hexdigest()[:12]}… differs from "
                           f"samples_sha256 {str(expected)[:12]}…: it was changed after the run")
    return [SampleRecord.model_validate_json(line) for line in _lines(data)]


def _horizons(run_dir: Path, task: dict[str, Any], records: list[SampleRecord],
              buckets: list[Bucket]) -> list[dict[str, Any]]:
    """The task's horizon searches computed again from their samples files (``run/horizon``)."""
    from harness.run.horizon import recomputed

    out = []
    for raw in task.get("horizons", []):
        h = HorizonResult.model_validate(raw)
        name = f"{run_dir / 'results.json'}: task {task.get('task')!r}: horizon {h.template!r}"
        searched = _records(run_dir, h.samples_file, h.samples_sha256, name)
        out.append(recomputed(h, records, searched, buckets).model_dump(mode="json"))
    return out


def _lines(data: bytes) -> Iterator[bytes]:
    return (line for line in data.splitlines() if line.strip())


def _buckets(spec: TaskSpec, rows: list[dict[str, Any]]) -> list[Bucket]:
    """The task's buckets as the run had them (bounds from its bucket table: quantile buckets'
    edges came from the data)."""
    n = len(rows)
    out = []
    for i, r in enumerate(rows):
        closed = (spec.buckets.values is not None
                  or (spec.buckets.quantiles is not None and i == n - 1))
        out.append(Bucket(int(r["index"]), str(r["bucket"]), float(r["lo"]), float(r["hi"]),
                          closed, r["role"]))
    return out


def rescored(run_dir: Path) -> Results:
    """The run's results with every task's numbers computed again from its samples."""
    path = run_dir / "results.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise HarnessError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise HarnessError(f"{path}: cannot read: {e}") from None
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        raise HarnessError(f"{path}: not a genharness results.json (no tasks list)")
    seed = int(data.get("run", {}).get("seed", 0))
    for task in data["tasks"]:
        try:
            spec = TaskSpec.model_validate(task["spec"])
            rows = task["templates"][0]["buckets"] if task["templates"] else []
        except (KeyError, IndexError, TypeError, ValidationError) as e:
            raise HarnessError(f"{path}: task {task.get('task')!r}: cannot read its spec and "
                               f"buckets ({type(e).__name__})") from None
        records = task_records(run_dir, task)
        buckets = _buckets(spec, rows)
        reports = task_reports(records, buckets, spec.gaps, seed, spec.scoring.metric,
                               spec.scoring.extra_metrics, spec.scoring.extract)
        task["templates"] = [r.model_dump(mode="json") for r in reports]
        task["shift"] = [x.model_dump(mode="json")
                         for x in record_splits(records, buckets, reports)]
        task["analyses"] = [a.model_dump(mode="json")
                            for a in run_analyses(records, buckets, spec.analyses, seed)]
        if task.get("horizons"):
            task["horizons"] = _horizons(run_dir, task, records, buckets)
    data["schema_version"] = SCHEMA_VERSION
    try:
        return Results.model_validate(data)
    except ValidationError as e:
        raise HarnessError(f"{path}: cannot rescore: {first_problem(e)}") from None


def rescore(run_dir: Path) -> Path:
    """Rewrite ``run_dir/results.json`` with its numbers computed again (see module)."""
    return write_results(rescored(run_dir), run_dir)
