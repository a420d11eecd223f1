"""Memory stays flat with the number of items: generated items are made on demand, records stream
to the samples file and the reports come from compact per-sample columns, giving exactly the
numbers ``task_reports`` gives from the records. (Time and RSS numbers: bench/scale.py.)"""

from __future__ import annotations

import json
import random
import tracemalloc
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from harness.config import RunConfig
from harness.items import GeneratedItems, build_instances
from harness.lm import LM, ModelIdentity, OnDone
from harness.requests import GenerateRequest, GenerateResponse
from harness.run.evaluate import evaluate
from harness.run.results import SLIM, SamplesFile, SampleWriter, read_samples
from harness.scoring import stats
from harness.scoring.records import SampleRecord
from harness.scoring.report import ScoreColumns, task_reports
from harness.spec.buckets import build_buckets
from harness.spec.scoring import GapsSpec
from harness.spec.task import BucketsSpec, RolesSpec
from harness.tasks.loader import load_spec

TASK = """\
name: copy_mem
description: Copy letters (memory test).
source: {type: generator, name: copy, per_bucket: 100000}
fields: {target: target, difficulty: length}
difficulty_name: length
buckets: {values: [2, 5, 8, 12]}
roles: {id_max: 5}
templates:
  - {id: io, prompt: "Copy the letters.\\nInput: {{ text }}\\nOutput:"}
output: {type: generate, max_tokens: 16, stop: ["\\n"]}
scoring: {extract: {kind: first_line}, metric: exact_match}
"""


class Echo(LM):
    """Answers every prompt with its last word, right or wrong by turns; keeps nothing."""

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend="test", name="echo")

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        out = [GenerateResponse(text=" " + r.prompt.rsplit(" ", 1)[-1] * (1 + len(r.prompt) % 2),
                                n_tokens=4) for r in requests]
        for i, r in enumerate(out):
            if on_done:
                on_done(i, r)
        return out

    def loglikelihood(self, requests: Any, on_done: Any = None) -> Any:
        raise NotImplementedError

    def loglikelihood_rolling(self, requests: Any, on_done: Any = None) -> Any:
        raise NotImplementedError


def _task(tmp_path: Path) -> Path:
    (tmp_path / "tasks" / "mem").mkdir(parents=True)
    (tmp_path / "tasks" / "mem" / "copy_mem.yaml").write_text(TASK)
    return tmp_path / "tasks"


def _peak(tasks: Path, out: Path, n: int) -> int:
    cfg = RunConfig(model="test:echo", tasks=["mem/copy_mem"], seed=0, limit_per_bucket=n // 4,
                    include_paths=[tasks], output_dir=out, use_cache=False, chunk_size=250)
    tracemalloc.start()
    try:
        res = evaluate(cfg, model=Echo())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert res.tasks[0].n_items == n
    return peak


def test_peak_memory_does_not_grow_with_items(tmp_path: Path) -> None:
    """Ten times the items, same chunk size: the traced peak grows by far less than a record per
    item (keeping a slim copy of each record, or the items, costs 1-3 KB per item)."""
    tasks = _task(tmp_path)
    _peak(tasks, tmp_path / "warm", 200)  # imports, compiled templates, caches
    small = _peak(tasks, tmp_path / "small", 1_000)
    big = _peak(tasks, tmp_path / "big", 10_000)
    per_item = (big - small) / 9_000
    assert per_item < 400, f"peak grows {per_item:.0f} B per item ({small} → {big} B)"
    assert len(read_samples(tmp_path / "big" / "samples" / "mem" / "copy_mem.jsonl")) == 10_000


def test_generated_items_are_made_on_demand_and_stable(tmp_path: Path) -> None:
    spec = load_spec(_task(tmp_path) / "mem" / "copy_mem.yaml")
    inst = build_instances(spec, "mem/copy_mem", 3, tmp_path, 12)
    items = inst.items
    assert isinstance(items, GeneratedItems) and len(items) == 48
    first = [(it.id, dict(it.record), it.difficulty, it.bucket) for it in items]
    assert first == [(it.id, dict(it.record), it.difficulty, it.bucket) for it in items]
    assert [it.id for it in items][:13] == [f"2/{j}" for j in range(12)] + ["5/0"]
    assert items[13].id == "5/1" and items[-1].id == "12/11"
    assert dict(items[5].record) == first[5][1]
    assert [it.id for it in items[10:14]] == ["2/10", "2/11", "5/0", "5/1"]
    with pytest.raises(IndexError):
        items[48]
    assert inst.count() == 48 and inst.count({"5", "12", "99"}) == 24
    # the limit is a prefix of a larger run's items
    big = build_instances(spec, "mem/copy_mem", 3, tmp_path, 20)
    assert {it.id: dict(it.record) for it in big.items if int(it.id.split("/")[1]) < 12} == {
        i: r for i, r, _, _ in first}
    # ranks order items by id within their bucket ("2/10" < "2/2")
    ranks = inst.id_ranks()
    for b in inst.buckets:
        pos = [i for i, it in enumerate(first) if it[3] == b]
        assert sorted(pos, key=lambda i: ranks[i]) == sorted(pos, key=lambda i: first[i][0])


def _records(rng: random.Random) -> tuple[list[SampleRecord], list[int]]:
    """Shuffled records of 3 (template, condition) groups over 5 buckets, with fractional scores
    and ids whose string order is not their number order; and each record's id rank."""
    buckets = build_buckets(BucketsSpec(values=[1, 2, 3, 4, 5]), RolesSpec(id_max=2))
    recs = []
    for tpl, cond in [("a", ""), ("b", ""), ("a", "k2")]:
        for b in buckets:
            for j in range(rng.randrange(1, 40)):
                recs.append(SampleRecord(
                    task="t/x", id=f"{b.label}/{j}", template=tpl, condition=cond, fewshot_ids=[],
                    difficulty=float(b.label), bucket=b.label, bucket_index=b.index, role=b.role,
                    prompt="p", target="t", output="o", extracted="o",
                    score=rng.choice([0.0, 1.0, 0.5, 1 / 3]) if b.index != 3 else 0.0))
    rng.shuffle(recs)
    ids = sorted({r.id for r in recs})
    return recs, [ids.index(r.id) for r in recs]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_score_columns_give_task_reports_numbers(seed: int) -> None:
    recs, ranks = _records(random.Random(seed))
    buckets = build_buckets(BucketsSpec(values=[1, 2, 3, 4, 5]), RolesSpec(id_max=2))
    gaps = GapsSpec(report=["id_ood", "retention", "horizon"], bootstrap=300)
    cols = ScoreColumns("t/x", buckets)
    for r, k in zip(recs, ranks, strict=True):
        cols.add(r, k)
    assert len(cols) == len(recs)
    got = [r.model_dump_json() for r in cols.reports(gaps, seed)]
    assert got == [r.model_dump_json() for r in task_reports(recs, buckets, gaps, seed)]
    assert ScoreColumns("t/x", buckets).reports(gaps, seed) == []
    bad = recs[0].model_copy(update={"bucket": "nope"})
    with pytest.raises(ValueError, match="does not match the task's bucket"):
        cols.add(bad, 0)


def test_samples_file_reads_records_back(tmp_path: Path) -> None:
    recs, _ = _records(random.Random(5))
    path = tmp_path / "s" / "t.jsonl"
    writer = SampleWriter(path)
    for r in recs:
        writer.write(r)
    writer.close()
    full, slim = SamplesFile(path), SamplesFile(path, slim=True)
    assert len(full) == len(recs) and list(full) == recs and full[7] == recs[7]
    assert full[-1] == recs[-1] and full[2:4] == recs[2:4]
    assert list(slim) == [r.model_copy(update=SLIM) for r in recs]
    assert json.loads(path.read_text().splitlines()[0])["prompt"] == "p"


def test_bootstrap_does_not_depend_on_its_chunking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Resample indices are drawn in chunks to bound memory; the draws (and CIs) are the same
    whatever the chunk size, so the chunk size can change without changing any result."""
    x = np.random.default_rng(0).random(1001).round()
    got = []
    for chunk in (1 << 21, 1 << 18, 1000, 7):
        monkeypatch.setattr(stats, "_CHUNK_ELEMENTS", chunk)
        got.append(stats.resampled_means(np.random.default_rng(9), x, 999).tolist())
        ma, mb = stats.bootstrap_means(list(x), list(x[:333]), seed=4, resamples=501)
        got.append(list(stats.percentile_ci(ma - mb)))
    assert all(g == got[0] for g in got[0::2]) and all(g == got[1] for g in got[1::2])
