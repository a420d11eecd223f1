"""Every shipped task against a planted truth (issue 45, item 2): with no model loaded, the
``planted:`` backend answers each task's items with a declared accuracy, and the harness must
report it back.

- **Buckets** (every task, a falling ``acc=`` curve with ``shift=0.25`` under
  ``--matched-control``; generator tasks at seeds 0 and 1 with 20 items a bucket, dataset tasks
  at seed 0 with 12): each bucket's planted accuracy lies inside its
  Wilson interval at the interval's own rate. The number of misses allowed is the 99.9% point of
  the Poisson-binomial law of the misses, each bucket's miss probability computed exactly from
  the binomial law of its n and planted accuracy (Wilson's coverage at n = 20 is not exactly
  95%); no bucket may miss its 99.999% interval, and no task's correct answers may stray more
  than 4.5 standard deviations from the planted expectation in all (a systematic miss).
- **Gaps** (the same runs): the planted ID−OOD gap, edge gap, and the matched control's split
  (difficulty and shift, pooled and per bucket) lie inside their intervals, misses at most the
  99.9% point of Binomial(checks, 5%); the planted shift is 0.25 on every generated answer.
- **Horizons** (every generator task with a ``horizon:`` block, seed 0, 60 search answers):
  d50 planted at the geometric middle of the ID edge and the search's ``max`` (10 items a
  fixed bucket) is measured with an interval that holds it; the planted floor is the search's
  own item baseline (a task whose baseline is not 0, e.g. parity at 0.5, is run again planted
  at it).
- **Floor** (every task, planted at its baseline: ``top=0``, so generated answers are wrong and
  multiple choice is a uniform guess): generation buckets and ID−OOD reports say floor.
- **Budgets** (every task under ``tokenizer=qwen`` with a model that always knows the answer
  and writes it in full): no answer is cut and every generated answer scores 1.

The runs share a response-cache-free, in-process ``evaluate`` per task (about 70 s of one core in
all). The data mirror (``shared_data``) is needed for the dataset tasks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.gaps.shift import MATCHED
from harness.run.evaluate import evaluate
from harness.run.results import Results, TaskResult, read_samples
from harness.scoring.records import SampleRecord
from harness.scoring.stats import wilson_interval
from harness.spec.buckets import build_buckets
from harness.spec.sources import GeneratorSource
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex

SEEDS = (0, 1)  # of the bucket and gap runs of a generator task
ITEMS = 20  # a bucket, in those runs
DATASET_ITEMS = 12  # a dataset task: seed 0 only, 12 items a bucket (scoring MATH is the slow part)
SHIFT = 0.25  # the planted exemplar shift
TOP, LOW = 0.95, 0.30  # the planted acc= curve runs from TOP (first bucket) to LOW (last)
ALPHA = 1e-3  # the chance that the miss counts fail a harness that is right
Z_WIDE = 4.42  # a bucket missing its two-sided 99.999% Wilson interval misses by a wide margin
Z_TASK = 4.5  # a task's correct answers in all, in standard deviations from the planted ones
HORIZON_ITEMS = 60
TOL = 1e-9  # intervals are stored rounded to 10 places


@dataclass(frozen=True)
class Run:
    """One planted run of one task: its results, its samples, and the truth planted."""

    task: TaskResult
    samples: list[SampleRecord]
    truth: Callable[[SampleRecord], float]  # the planted accuracy of the sample's item


@pytest.fixture(scope="module")
def specs(shared_data: Path) -> dict[str, TaskSpec]:
    """Every shipped task (the built-in index: a new task is covered without a change here)."""
    index = TaskIndex.build([], providers=[])
    return {address: index.spec(ref) for address, ref in sorted(index.refs.items())}


def _run(out: Path, task: str, args: dict[str, str], **cfg: object) -> Results:
    res = evaluate(RunConfig(model="planted:", model_args=args, tasks=[task], output_dir=out,
                             use_cache=False, **cfg))
    assert not res.failed, res.failed
    return res


def _samples(out: Path, task: TaskResult) -> list[SampleRecord]:
    return read_samples(out / task.samples_file, task.samples_sha256)


def _n_buckets(spec: TaskSpec) -> int:
    return len(build_buckets(spec.buckets, spec.roles))


def _curve(k: int) -> list[float]:
    """The planted accuracy of each of ``k`` buckets: falling evenly from TOP to LOW."""
    return [round(TOP - (TOP - LOW) * i / max(1, k - 1), 4) for i in range(k)]


def planted(acc: Sequence[float], shift: float) -> Callable[[SampleRecord], float]:
    """The accuracy the planted model has on a sample, from the documented truth
    (docs/planted.md): its bucket's ``acc``, less ``shift`` for an OOD item asked with exemplars
    other than its own bucket's; for multiple choice a uniform guess where it does not know
    (so never below 1/k)."""

    def truth(s: SampleRecord) -> float:
        p = acc[s.bucket_index]
        if s.role == "OOD" and s.fewshot_ids and s.condition != MATCHED:
            p -= shift
        p = min(1.0, max(0.0, p))
        return max(p, 1 / len(s.choices)) if s.choices else p

    return truth


@pytest.fixture(scope="module")
def runs(specs: dict[str, TaskSpec], tmp_path_factory: pytest.TempPathFactory) -> list[Run]:
    """Every task at every seed, under the acc= curve with the shift and matched control."""
    out, got = tmp_path_factory.mktemp("planted_tasks"), []
    for address, spec in specs.items():
        acc = _curve(_n_buckets(spec))
        args = {"acc": "/".join(f"{a:g}" for a in acc), "shift": f"{SHIFT:g}"}
        made = isinstance(spec.source, GeneratorSource)
        for seed in SEEDS if made else SEEDS[:1]:
            folder = out / f"{address.replace('/', '_')}_{seed}"
            res = _run(folder, address, args, seed=seed,
                       limit_per_bucket=ITEMS if made else DATASET_ITEMS, matched_control=True)
            (task,) = res.tasks
            got.append(Run(task, _samples(folder, task), planted(acc, SHIFT)))
    return got


# --- the statistics of the checks -------------------------------------------------------------


def wilson_miss(n: int, p: float) -> float:
    """The probability that the Wilson 95% interval of Binomial(n, p) misses p."""
    out = 0.0
    for k in range(n + 1):
        lo, hi = wilson_interval(k, n)
        if not lo - TOL <= p <= hi + TOL:
            out += math.comb(n, k) * p ** k * (1 - p) ** (n - k)
    return out


def allowed_misses(probs: Iterable[float], alpha: float = ALPHA) -> int:
    """The smallest m with P(misses > m) <= alpha, the misses independent with ``probs``."""
    dist = [1.0]
    for q in probs:
        dist = [a * (1 - q) + b * q for a, b in zip([*dist, 0.0], [0.0, *dist], strict=True)]
    tail = 1.0
    for m, pm in enumerate(dist):
        tail -= pm
        if tail <= alpha:
            return m
    return len(dist) - 1


def _inside(value: float, lo: float | None, hi: float | None) -> bool:
    return (lo is None or lo - TOL <= value) and (hi is None or value <= hi + TOL)


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def test_every_shipped_task_runs_planted(specs: dict[str, TaskSpec], runs: list[Run]) -> None:
    assert len(specs) >= 34
    assert {r.task.task for r in runs} == set(specs)
    for r in runs:
        assert r.samples and all(t.n for t in r.task.templates), r.task.task


def test_each_bucket_holds_its_planted_accuracy_at_the_nominal_rate(runs: list[Run]) -> None:
    misses, wide, probs, checked = [], [], [], 0
    drift: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0])  # found, planted, var
    for r in runs:
        for rep in r.task.templates:
            rows = defaultdict(list)
            for s in r.samples:
                if (s.template, s.condition) == (rep.template, rep.condition):
                    rows[s.bucket_index].append(s)
            for b in rep.buckets:
                if not b.n:
                    continue
                ps = [r.truth(s) for s in rows[b.index]]
                assert len(ps) == b.n, (r.task.task, rep.template, b.bucket)
                p = _mean(ps)
                d = drift[r.task.task]
                d[0] += b.correct
                d[1] += math.fsum(ps)
                d[2] += math.fsum(x * (1 - x) for x in ps)
                if p in (0.0, 1.0):
                    continue  # a Wilson interval always holds 0 or 1 here: nothing to check
                checked += 1
                probs.append(wilson_miss(b.n, p))
                where = (r.task.task, rep.template, rep.condition,
                         b.bucket, round(p, 3), b.accuracy, b.n)
                if not _inside(p, b.ci_low, b.ci_high):
                    misses.append(where)
                if not _inside(p, *wilson_interval(b.correct, b.n, Z_WIDE)):
                    wide.append(where)
    limit = allowed_misses(probs)
    assert checked > 300
    assert len(misses) <= limit, (f"{len(misses)} of {checked} buckets miss their planted "
                                  f"accuracy (expected {math.fsum(probs):.1f}, at most {limit})",
                                  misses)
    assert not wide, wide
    strays = {t: round((f - e) / math.sqrt(v), 2) if v else f - e
              for t, (f, e, v) in drift.items()
              if (abs(f - e) > Z_TASK * math.sqrt(v) if v else abs(f - e) > TOL)}
    assert not strays, f"tasks whose answers stray from the planted curve (z): {strays}"


def test_gaps_and_the_shift_hold_their_planted_values(runs: list[Run]) -> None:
    """The ID−OOD and edge gaps of every report, and the matched control's split of every task
    with exemplars: each interval holds its planted value at about the nominal rate."""
    checks: list[tuple[tuple[str, ...], float, float, float, float]] = []
    # (what, planted, value, lo, hi)
    shifts = 0
    for r in runs:
        name = r.task.task
        for rep in r.task.templates:
            mine = [s for s in r.samples if (s.template, s.condition) == (rep.template,
                                                                           rep.condition)]
            ids = [r.truth(s) for s in mine if s.role == "ID"]
            oods = [r.truth(s) for s in mine if s.role == "OOD"]
            g = rep.gaps
            if g.id_ood is not None:
                assert (g.id_ood.n_id, g.id_ood.n_ood) == (len(ids), len(oods)), name
                checks.append(((name, rep.template, rep.condition, "id_ood"),
                               _mean(ids) - _mean(oods), g.id_ood.value, g.id_ood.ci_low,
                               g.id_ood.ci_high))
            if g.edge is not None:
                by = {b.bucket: [r.truth(s) for s in mine if s.bucket == b.bucket]
                      for b in rep.buckets}
                checks.append(((name, rep.template, rep.condition, "edge"),
                               _mean(by[g.edge.id_bucket]) - _mean(by[g.edge.ood_bucket]),
                               g.edge.value, g.edge.ci_low, g.edge.ci_high))
        for split in r.task.shift:
            if split.status != "measured":
                continue
            of = [s for s in r.samples if s.template == split.template]
            base = {s.id: s for s in of if s.role == "OOD" and s.condition == split.base}
            matched = {s.id: s for s in of if s.role == "OOD" and s.condition == split.matched}
            pairs = [(base[i], matched[i]) for i in base.keys() & matched.keys()]
            ids = [r.truth(s) for s in of if s.role == "ID" and s.condition == split.base]
            assert (split.n_ood, split.n_id) == (len(pairs), len(ids)), name
            diffs = [r.truth(m) - r.truth(b) for b, m in pairs]
            if not any(b.choices for b, _ in pairs):
                assert all(abs(d - SHIFT) < TOL for d in diffs), name  # the truth is SHIFT
            assert split.shift is not None and split.difficulty is not None
            shifts += 1
            checks.append(((name, split.template, "shift"), _mean(diffs), split.shift.value,
                           split.shift.ci_low, split.shift.ci_high))
            checks.append(((name, split.template, "difficulty"),
                           _mean(ids) - _mean([r.truth(m) for _, m in pairs]),
                           split.difficulty.value, split.difficulty.ci_low,
                           split.difficulty.ci_high))
            for bs in split.buckets:
                mine_ = [(b, m) for b, m in pairs if b.bucket == bs.bucket]
                checks.append(((name, split.template, "shift", bs.bucket),
                               _mean([r.truth(m) - r.truth(b) for b, m in mine_]),
                               bs.shift.value, bs.shift.ci_low, bs.shift.ci_high))
    assert shifts >= 20 and len(checks) > 150
    misses = [c for c in checks if not _inside(c[1], c[3], c[4])]
    limit = allowed_misses([0.05] * len(checks))
    assert len(misses) <= limit, (f"{len(misses)} of {len(checks)} gap intervals miss (at most "
                                  f"{limit})", misses)
    # a wide miss: the planted value beyond the interval by more than its half-width
    wide = [c for c in checks
            if not _inside(c[1], c[3] - (c[4] - c[3]) / 2, c[4] + (c[4] - c[3]) / 2)]
    assert not wide, wide


def test_d50_is_found_where_it_was_planted(specs: dict[str, TaskSpec],
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every generator task with a ``horizon:`` block (13 today): d50 planted halfway (in ln
    units) between the ID edge and the search's ``max``."""
    out = tmp_path_factory.mktemp("planted_horizons")
    checked, misses = 0, []
    for address, spec in specs.items():
        if spec.horizon is None or not isinstance(spec.source, GeneratorSource):
            continue
        edge = max(b.top for b in build_buckets(spec.buckets, spec.roles) if b.role == "ID")
        d50 = round(math.sqrt(edge * spec.horizon.max), 1)
        base = 0.0
        for attempt in range(2):  # the second: planted at the search's own baseline
            args = {"d50": f"{d50:g}", "sigma": "0.3", "top": "0.95", "base": f"{base:g}"}
            folder = out / f"{address.replace('/', '_')}_{attempt}"
            res = _run(folder, address, args, limit_per_bucket=10, horizon=True,
                       horizon_items=HORIZON_ITEMS)
            (h,) = res.tasks[0].horizons
            if abs(h.baseline - base) <= 0.05:
                break
            base = round(h.baseline, 2)
        checked += 1
        assert h.status == "measured" and h.lower is not None, (address, h.status)
        assert h.range_lo < d50 < h.range_hi and h.lost == 0, address
        if not _inside(d50, h.lower, h.upper):
            misses.append((address, d50, h.d50, h.lower, h.upper))
    assert checked >= 13
    limit = allowed_misses([0.05] * checked)
    assert len(misses) <= limit, misses


def test_floor_where_the_curve_is_planted_at_the_baseline(
        specs: dict[str, TaskSpec], tmp_path_factory: pytest.TempPathFactory) -> None:
    """top=0: a generated answer is always wrong (the baseline of generation is 0) and
    multiple choice is a uniform guess (1/k): every generation bucket is floor, as is every
    ID−OOD report, and a guessing bucket is floor at about the rate its interval allows."""
    out = tmp_path_factory.mktemp("planted_floor")
    res = evaluate(RunConfig(model="planted:", model_args={"d50": "1", "top": "0"},
                             tasks=list(specs), output_dir=out, use_cache=False,
                             limit_per_bucket=8))
    assert not res.failed and len(res.tasks) == len(specs), res.failed
    guesses, not_floor = 0, []
    for task in res.tasks:
        choice = specs[task.task].output.type == "multiple_choice"
        for rep in task.templates:
            for b in rep.buckets:
                if not b.n:
                    continue
                guesses += choice
                if not b.floor:
                    not_floor.append((task.task, rep.template, b.bucket, b.accuracy, b.baseline,
                                      choice))
            if not choice and any(b.n for b in rep.buckets if b.role == "ID"):
                assert rep.gaps.status == "floor", (task.task, rep.template, rep.gaps.status)
    assert not [x for x in not_floor if not x[-1]], not_floor
    assert len(not_floor) <= allowed_misses([0.05] * guesses), not_floor


def test_no_answer_is_cut_under_the_qwen_tokenizer(
        specs: dict[str, TaskSpec], tmp_path_factory: pytest.TempPathFactory) -> None:
    """A model that knows every answer and writes it at length (the worked solution for MATH,
    the scratchpad for scratchpad templates), counted in Qwen2.5's tokens: the budgets follow
    the targets, so no answer stops on a budget and every one scores full marks."""
    pytest.importorskip("tiktoken")
    out = tmp_path_factory.mktemp("planted_qwen")
    res = evaluate(RunConfig(model="planted:", model_args={"d50": "1e9", "top": "1",
                                                           "tokenizer": "qwen"},
                             tasks=list(specs), output_dir=out, use_cache=False,
                             limit_per_bucket=8))
    assert not res.failed and len(res.tasks) == len(specs), res.failed
    cut, short = [], []
    for task in res.tasks:
        for s in _samples(out, task):
            if s.cut or any(c.cut for c in s.calls):
                cut.append((task.task, s.id, s.template, s.condition))
            if s.score < 1:
                short.append((task.task, s.id, s.template, s.output[-60:]))
        for rep in task.templates:
            assert all(b.cut is None and not b.budget_bound for b in rep.buckets), task.task
            assert all(x.cut is None for x in rep.roles), task.task
    assert not cut, cut
    assert not short, short
