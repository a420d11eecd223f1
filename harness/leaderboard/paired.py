"""Paired comparison of two runs on the same items: ``harness compare A B`` (results.json files).

Samples are paired by (task, template, condition, item id); the runs must have the same seed and
exactly the same samples (same ids, buckets and targets), else the comparison is refused. For each
task, each bucket, and all tasks together it reports ``acc(B) − acc(A)`` with a paired percentile
bootstrap 95% CI (items are resampled, each with all of its templates/conditions, so the pairing
and the within-item correlation are kept), and McNemar's test over *items*: ``b`` items where A
scores higher (its mean over the item's templates and conditions), ``c`` where B does (for one
binary sample per item: A right and B wrong, and the reverse). With ``b + c < 25`` the p-value
is the exact two-sided binomial one, ``min(1, 2·P(X ≤ min(b, c)))`` for ``X ~ Bin(b + c, 1/2)``;
otherwise the chi-square statistic with continuity correction ``(|b − c| − 1)² / (b + c)`` on 1
degree of freedom. The per-task p-values are also given Holm-adjusted over the tasks.

Suite and overall scores are defined as on the leaderboard (:mod:`harness.leaderboard.scores`):
task accuracy over every sample, suite = mean over its tasks, overall = mean over suites; their
differences get a paired bootstrap that resamples items within each task. Every statistic flags
a zero-width interval (no information: e.g. both runs at 0% throughout) and disagreement between
the two tests (the CI excludes 0 but p ≥ 0.05, or the reverse).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import HarnessError
from harness.leaderboard.collect import suite_of
from harness.leaderboard.inputs import load_results, open_samples, samples_sha256
from harness.leaderboard.paths import samples_problem
from harness.leaderboard.scores import (
    ALPHA,
    holm,
    macro_resamples,
    macro_scores,
    sign_test,
)
from harness.results import Results
from harness.scoring.records import SampleRecord
from harness.scoring.stats import percentile_ci, r10, resampled_sums
from harness.seeding import derive_seed

LEVEL = 0.95


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PairedStat(_Model):
    """Paired accuracy difference over one set of paired samples."""

    scope: str  # "all" or a bucket label
    role: str | None  # the bucket's role ("ID"/"OOD"); None for "all"
    n: int  # paired samples (item × template × condition)
    n_items: int  # distinct items (the resampling and testing unit)
    acc_a: float  # mean score of run A
    acc_b: float  # mean score of run B
    diff: float  # acc_b − acc_a
    ci_low: float  # paired bootstrap lower bound
    ci_high: float  # paired bootstrap upper bound
    zero_width: bool  # ci_low == ci_high: the interval carries no information
    both_right: int  # items at score 1 in both runs
    a_only: int  # b: items where A scores higher
    b_only: int  # c: items where B scores higher
    both_wrong: int  # items at score 0 in both runs
    p_value: float  # McNemar p-value over items (1.0 with no discordant items)
    p_holm: float | None  # Holm-adjusted over the tasks (task-level "all" rows only)
    test: str  # "exact-binomial", "chi2-continuity" or "none" (no discordant items)
    tests_disagree: bool  # the CI excludes 0 but p >= 0.05, or p < 0.05 but the CI holds 0


class MacroStat(_Model):
    """A suite or overall score of both runs (leaderboard definition) and its difference."""

    scope: str  # suite name, or "overall" (mean of the suite scores)
    n_tasks: int  # tasks it averages
    acc_a: float  # score of run A
    acc_b: float  # score of run B
    diff: float  # acc_b − acc_a
    ci_low: float  # paired bootstrap lower bound (items resampled within each task)
    ci_high: float  # paired bootstrap upper bound
    zero_width: bool  # ci_low == ci_high


class TaskComparison(_Model):
    """One task: all its samples, then bucket by bucket."""

    task: str  # task address
    overall: PairedStat  # every paired sample of the task
    buckets: list[PairedStat]  # per bucket, in bucket order


class Comparison(_Model):
    """The whole ``harness compare`` result (``--json``)."""

    kind: str = "genharness-compare"  # marks the file for leaderboard build --compare
    run_a: str  # results.json of run A
    run_b: str  # results.json of run B
    model_a: str  # backend:name of A
    model_b: str  # backend:name of B
    seed: int  # the common run seed
    level: float  # confidence level of the CIs
    resamples: int  # bootstrap resamples
    correction: str = "Holm"  # multiplicity correction of the per-task p-values
    tasks: list[TaskComparison]  # per task, in run A's order
    suites: list[MacroStat]  # per suite: mean task accuracy, as on the leaderboard
    overall: MacroStat  # mean of the suite scores, as on the leaderboard
    pooled: PairedStat  # every item of every task pooled (McNemar over all items)


def mcnemar(b: int, c: int) -> tuple[float, str]:
    """McNemar's two-sided p-value for discordant counts *b* and *c*, and the test used."""
    return sign_test(b, c)


def paired_bootstrap_ci(diff_sums: Sequence[float], counts: Sequence[int], seed: int,
                        resamples: int, level: float = LEVEL) -> tuple[float, float]:
    """Percentile CI of ``sum(diff) / sum(n)`` resampling clusters (items) with replacement;
    ``diff_sums[i]`` is item i's summed score difference over its ``counts[i]`` pairs."""
    d = np.asarray(diff_sums, dtype=np.float64)
    w = np.asarray(counts, dtype=np.float64)
    if d.size == 0:
        raise ValueError("paired_bootstrap_ci: no items")
    sd, sw = resampled_sums(np.random.default_rng(seed), [d, w], resamples)
    return percentile_ci(sd / sw, level)


_Pair = tuple[SampleRecord, SampleRecord]


def paired_stat(pairs: Sequence[_Pair], scope: str, role: str | None, seed: int,
                resamples: int, cluster: str = "") -> PairedStat:
    """The paired statistics of *pairs* (A's record, B's record); items cluster by id
    (prefixed with the task when pooling tasks: ``cluster="task"``)."""
    clusters: dict[str, list[tuple[float, float]]] = {}
    for a, b in pairs:
        key = f"{a.task}\x1f{a.id}" if cluster == "task" else a.id
        clusters.setdefault(key, []).append((a.score, b.score))
    keys = sorted(clusters)
    lo, hi = paired_bootstrap_ci([math.fsum(y - x for x, y in clusters[k]) for k in keys],
                                 [len(clusters[k]) for k in keys], seed, resamples)
    means = [(math.fsum(x for x, _ in clusters[k]) / len(clusters[k]),
              math.fsum(y for _, y in clusters[k]) / len(clusters[k])) for k in keys]
    a_only = sum(1 for x, y in means if x > y)
    b_only = sum(1 for x, y in means if y > x)
    p, test = sign_test(a_only, b_only)
    n = len(pairs)
    acc_a = math.fsum(a.score for a, _ in pairs) / n
    acc_b = math.fsum(b.score for _, b in pairs) / n
    excludes = lo > 0 or hi < 0
    return PairedStat(
        scope=scope, role=role, n=n, n_items=len(keys), acc_a=r10(acc_a), acc_b=r10(acc_b),
        diff=r10(acc_b - acc_a), ci_low=r10(lo), ci_high=r10(hi), zero_width=lo == hi,
        both_right=sum(1 for x, y in means if x >= 1.0 and y >= 1.0), a_only=a_only,
        b_only=b_only, both_wrong=sum(1 for x, y in means if x <= 0.0 and y <= 0.0),
        p_value=r10(p), p_holm=None, test=test, tests_disagree=excludes != (p < ALPHA),
    )


def macro_stats(per_task: Sequence[tuple[str, list[_Pair]]], seed: int, resamples: int
                ) -> tuple[list[MacroStat], MacroStat]:
    """Suite and overall scores of A and B with a paired bootstrap (items resampled within
    each task, the same draw for both runs)."""
    suites = {t: suite_of(t) for t, _ in per_task}
    acc_a: dict[str, float] = {}
    acc_b: dict[str, float] = {}
    diffs: dict[str, npt.NDArray[np.float64]] = {}
    for task, pairs in per_task:
        items: dict[str, list[tuple[float, float]]] = {}
        for a, b in pairs:
            items.setdefault(a.id, []).append((a.score, b.score))
        keys = sorted(items)
        sa = np.array([math.fsum(x for x, _ in items[k]) for k in keys])
        sb = np.array([math.fsum(y for _, y in items[k]) for k in keys])
        cnt = np.array([len(items[k]) for k in keys], dtype=np.float64)
        acc_a[task], acc_b[task] = float(sa.sum() / cnt.sum()), float(sb.sum() / cnt.sum())
        rng = np.random.default_rng(derive_seed(seed, "compare-macro", task))
        rb, ra, rc = resampled_sums(rng, [sb, sa, cnt], resamples)
        diffs[task] = (rb - ra) / rc
    sa_, oa = macro_scores(acc_a, suites)
    sb_, ob = macro_scores(acc_b, suites)
    sd, od = macro_resamples(diffs, suites)
    count = {s: sum(1 for t in suites.values() if t == s) for s in sa_}

    def stat(scope: str, a: float, b: float, rs: npt.NDArray[np.float64], n: int) -> MacroStat:
        lo, hi = percentile_ci(rs)
        return MacroStat(scope=scope, n_tasks=n, acc_a=r10(a), acc_b=r10(b), diff=r10(b - a),
                         ci_low=r10(lo), ci_high=r10(hi), zero_width=lo == hi)

    per_suite = [stat(s, sa_[s], sb_[s], sd[s], count[s]) for s in sa_]
    assert oa is not None and ob is not None
    return per_suite, stat("overall", oa, ob, od, len(per_task))


def _samples(results_path: Path, res: Results, task: str) -> list[SampleRecord]:
    i, t = next((i, t) for i, t in enumerate(res.tasks) if t.task == task)
    path = results_path.parent / t.samples_file
    src, why = samples_problem(results_path.parent, t.samples_file)
    if src is None and why is None:  # a leaderboard's gzip-compressed copy
        src, why = samples_problem(results_path.parent, t.samples_file + ".gz")
    if why is not None:  # only files inside the run folder are read
        raise HarnessError(f"{results_path}: tasks[{i}].samples_file: {t.samples_file!r} {why}")
    if src is None:
        raise HarnessError(f"{path}: per-sample file of {task} not found (compare needs "
                           "the samples/ folder next to results.json)")
    try:
        if t.samples_sha256 is not None and samples_sha256(src) != t.samples_sha256:
            raise HarnessError(f"{src}: differs from samples_sha256 in {results_path}: the "
                               "samples file was changed after the run")
        with open_samples(src) as f:
            return [SampleRecord.model_validate_json(line) for line in f if line.strip()]
    except (OSError, ValueError, ValidationError) as e:
        raise HarnessError(f"{path}: cannot read samples: {str(e).splitlines()[0]}") from None


def _pair(task: str, sa: list[SampleRecord], sb: list[SampleRecord]) -> list[_Pair]:
    ka = {(s.template, s.condition, s.id): s for s in sa}
    kb = {(s.template, s.condition, s.id): s for s in sb}
    only_a, only_b = sorted(set(ka) - set(kb)), sorted(set(kb) - set(ka))
    if only_a or only_b:
        ex = (only_a or only_b)[0]
        raise HarnessError(
            f"runs differ in items: {task}: {len(only_a)} samples only in A, {len(only_b)} only "
            f"in B (e.g. template {ex[0]!r} item {ex[2]!r}); compare runs made with the same "
            "tasks, seed, --limit-per-bucket and --templates")
    for k, a in ka.items():
        b = kb[k]
        if (a.bucket, a.target) != (b.bucket, b.target):
            raise HarnessError(f"runs differ in items: {task}: item {k[2]!r} has bucket/target "
                               f"{a.bucket!r}/{a.target!r} in A but {b.bucket!r}/{b.target!r} "
                               "in B")
    return [(ka[k], kb[k]) for k in sorted(ka)]


def compare_runs(path_a: Path, path_b: Path, tasks: Sequence[str] | None = None,
                 resamples: int = 2000) -> Comparison:
    """Pair two runs item by item and compare them (refuses runs whose items differ)."""
    if resamples < 100:
        raise HarnessError(f"--resamples: need at least 100, got {resamples}")
    path_a = path_a / "results.json" if path_a.is_dir() else path_a
    path_b = path_b / "results.json" if path_b.is_dir() else path_b
    ra, rb = load_results(path_a), load_results(path_b)
    if ra.run.seed != rb.run.seed:
        raise HarnessError(f"runs differ in seed ({ra.run.seed} in {path_a}, {rb.run.seed} in "
                           f"{path_b}): their items differ; rerun one with --seed "
                           f"{ra.run.seed}")
    names_a, names_b = [t.task for t in ra.tasks], [t.task for t in rb.tasks]
    if tasks:
        missing = [t for t in tasks if t not in names_a or t not in names_b]
        if missing:
            raise HarnessError(f"--tasks: {', '.join(missing)} not in both runs")
        chosen = [t for t in names_a if t in tasks]
    else:
        if set(names_a) != set(names_b):
            diff = sorted(set(names_a) ^ set(names_b))
            raise HarnessError(f"runs differ in items: tasks in only one run: {', '.join(diff)} "
                               "(pick common ones with --tasks)")
        chosen = names_a
    seed = ra.run.seed
    out: list[TaskComparison] = []
    everything: list[_Pair] = []
    per_task: list[tuple[str, list[_Pair]]] = []
    for task in chosen:
        pairs = _pair(task, _samples(path_a, ra, task), _samples(path_b, rb, task))
        if not pairs:
            continue
        everything += pairs
        per_task.append((task, pairs))
        by_bucket: dict[tuple[int, str], list[_Pair]] = {}
        for p in pairs:
            by_bucket.setdefault((p[0].bucket_index, p[0].bucket), []).append(p)
        buckets = [paired_stat(ps, label, ps[0][0].role,
                               derive_seed(seed, "compare", task, label), resamples)
                   for (_, label), ps in sorted(by_bucket.items())]
        out.append(TaskComparison(task=task, overall=paired_stat(
            pairs, "all", None, derive_seed(seed, "compare", task), resamples), buckets=buckets))
    if not everything:
        raise HarnessError(f"{path_a} and {path_b}: no samples to compare")
    adjusted = holm([t.overall.p_value for t in out])
    out = [t.model_copy(update={"overall": t.overall.model_copy(update={"p_holm": r10(p)})})
           for t, p in zip(out, adjusted, strict=True) if p is not None]
    suites, overall = macro_stats(per_task, seed, resamples)
    return Comparison(
        run_a=str(path_a), run_b=str(path_b), model_a=f"{ra.model.backend}:{ra.model.name}",
        model_b=f"{rb.model.backend}:{rb.model.name}", seed=seed, level=LEVEL,
        resamples=resamples, tasks=out, suites=suites, overall=overall,
        pooled=paired_stat(everything, "all", None, derive_seed(seed, "compare"), resamples,
                           cluster="task"),
    )
