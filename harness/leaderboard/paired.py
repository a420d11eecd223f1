"""Comparison of two runs: ``harness compare A B`` (results.json files).

Samples are matched by (task, template, condition, item id); the answers of the matched-exemplar
control (condition ``matched``, ``gaps/shift``) are left out, as the board's scores leave them out.
A task of one run that the other lacks is matched with the variant (or the base) whose
``items_from`` names it: their prompts differ, so their samples pair item by item (the same
ids, buckets, difficulties and targets, as many samples per item), in (template, condition)
order.
When every matched sample has the
same bucket, prompt and target in both runs (the same tasks, seed, templates and few-shot draws),
the runs are **paired**: for each task, each bucket, and all tasks together, ``acc(B) − acc(A)``
gets the paired score interval of ``harness.scoring.intervals.paired_diff_interval`` (items are
the unit, each with all of its templates and conditions), and the sign test over *items*
(``harness.leaderboard.scores.sign_test``; McNemar's test when every item has one binary
sample, the name the CLI and the pages use): ``b`` items where A scores higher (its mean over
the item's templates and conditions), ``c`` where B does. With ``b + c < 25`` the p-value is the
exact two-sided binomial one, ``min(1, 2·P(X ≤ min(b, c)))`` for ``X ~ Bin(b + c, 1/2)``;
otherwise the chi-square statistic with continuity
correction ``(|b − c| − 1)² / (b + c)`` on 1 degree of freedom.

When the items differ (another seed, other prompts), comparing item by item would pair different
questions: the runs are then compared as two **independent** samples, Newcombe's interval for a
difference of proportions with the p-value that inverts it, and the output says so. The runs must
still have the same tasks (and are compared per bucket label both have).

The per-task p-values are also given Holm-adjusted over the tasks. Suite and overall scores are
defined as on the leaderboard (:mod:`harness.leaderboard.scores`): task accuracy over every
sample, suite = mean over its tasks, overall = mean over suites; their differences get the MOVER
interval of that mean over the tasks' own intervals (tasks independent). No interval here has
zero width; ``tests_disagree`` flags the CI excluding 0 while p ≥ 0.05, or the reverse.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from harness.errors import HarnessError
from harness.gaps.shift import MATCHED
from harness.leaderboard.collect import suite_of
from harness.leaderboard.inputs import load_results, open_samples, samples_sha256
from harness.leaderboard.paths import samples_problem
from harness.leaderboard.scores import ALPHA, holm, macro_scores, sign_test
from harness.run.results import Results
from harness.scoring.intervals import (
    Term,
    clustered_proportion,
    diff_interval,
    p_value,
    paired_diff_interval,
    sum_interval,
)
from harness.scoring.records import SampleRecord
from harness.scoring.stats import r10

LEVEL = 0.95


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class PairedStat(_Model):
    """Accuracy difference B − A over one set of matched samples."""

    scope: str  # "all" or a bucket label
    role: str | None  # the bucket's role ("ID"/"OOD"); None for "all"
    paired: bool  # the same items in both runs: paired interval and the sign test; else independent
    n: int  # samples of A (paired: item × template × condition pairs)
    n_items: int  # distinct items of A (the testing unit)
    n_items_b: int  # distinct items of B (equal to n_items when paired)
    acc_a: float  # mean score of run A
    acc_b: float  # mean score of run B
    diff: float  # acc_b − acc_a
    ci_low: float  # lower bound of the score interval
    ci_high: float  # upper bound of the score interval
    both_right: int | None  # items at score 1 in both runs (paired only)
    a_only: int | None  # b: items where A scores higher (paired only)
    b_only: int | None  # c: items where B scores higher (paired only)
    both_wrong: int | None  # items at score 0 in both runs (paired only)
    p_value: float  # the sign test over items (paired) or the inverted Newcombe interval
    p_holm: float | None  # Holm-adjusted over the tasks (task-level "all" rows only)
    test: str  # "exact-binomial", "chi2-continuity", "none" (no discordant items), "newcombe"
    tests_disagree: bool  # the CI excludes 0 but p >= 0.05, or p < 0.05 but the CI holds 0


class MacroStat(_Model):
    """A suite or overall score of both runs (leaderboard definition) and its difference."""

    scope: str  # suite name, or "overall" (mean of the suite scores)
    n_tasks: int  # tasks it averages
    acc_a: float  # score of run A
    acc_b: float  # score of run B
    diff: float  # acc_b − acc_a
    ci_low: float  # MOVER lower bound over the tasks' own intervals
    ci_high: float  # MOVER upper bound


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
    seed: int  # run A's seed
    seed_b: int  # run B's seed
    paired: bool  # every task's items identical in both runs (else compared as independent)
    level: float  # confidence level of the CIs
    correction: str = "Holm"  # multiplicity correction of the per-task p-values
    tasks: list[TaskComparison]  # per task, in run A's order
    suites: list[MacroStat]  # per suite: mean task accuracy, as on the leaderboard
    overall: MacroStat  # mean of the suite scores, as on the leaderboard
    pooled: PairedStat  # every item of every task pooled


_Pair = tuple[SampleRecord, SampleRecord]


def _items(records: Sequence[SampleRecord], cluster: str) -> tuple[list[str], list[float],
                                                                  list[float]]:
    """Item keys, summed scores and sample counts (items keyed by task too: ``cluster="task"``)."""
    sums: dict[str, list[float]] = {}
    for r in records:
        sums.setdefault(f"{r.task}\x1f{r.id}" if cluster == "task" else r.id, []).append(r.score)
    keys = sorted(sums)
    return keys, [math.fsum(sums[k]) for k in keys], [float(len(sums[k])) for k in keys]


def paired_stat(pairs: Sequence[_Pair], scope: str, role: str | None,
                cluster: str = "") -> PairedStat:
    """The paired statistics of *pairs* (A's record, B's record); items cluster by id
    (prefixed with the task when pooling tasks: ``cluster="task"``)."""
    keys, sa, counts = _items([a for a, _ in pairs], cluster)
    _, sb, _ = _items([b for _, b in pairs], cluster)
    means = [(x / c, y / c) for x, y, c in zip(sa, sb, counts, strict=True)]
    lo, hi = paired_diff_interval([x for x, _ in means], [y for _, y in means], counts)
    a_only = sum(1 for x, y in means if x > y)
    b_only = sum(1 for x, y in means if y > x)
    p, test = sign_test(a_only, b_only)
    n = len(pairs)
    acc_a = math.fsum(a.score for a, _ in pairs) / n
    acc_b = math.fsum(b.score for _, b in pairs) / n
    excludes = lo > 0 or hi < 0
    return PairedStat(
        scope=scope, role=role, paired=True, n=n, n_items=len(keys), n_items_b=len(keys),
        acc_a=r10(acc_a), acc_b=r10(acc_b), diff=r10(acc_b - acc_a), ci_low=r10(lo),
        ci_high=r10(hi), both_right=sum(1 for x, y in means if x >= 1.0 and y >= 1.0),
        a_only=a_only, b_only=b_only,
        both_wrong=sum(1 for x, y in means if x <= 0.0 and y <= 0.0),
        p_value=r10(p), p_holm=None, test=test, tests_disagree=excludes != (p < ALPHA),
    )


def unpaired_stat(ra: Sequence[SampleRecord], rb: Sequence[SampleRecord], scope: str,
                  role: str | None, cluster: str = "") -> PairedStat:
    """B − A as two independent samples (their items differ): Newcombe's interval on each
    run's accuracy over its items, and the p-value that inverts it."""
    ka, sa, ca = _items(ra, cluster)
    kb, sb, cb = _items(rb, cluster)
    pa, pb = clustered_proportion(sa, ca), clustered_proportion(sb, cb)
    lo, hi = diff_interval(pb, pa)
    p = p_value(lambda lv: diff_interval(pb, pa, lv))
    return PairedStat(
        scope=scope, role=role, paired=False, n=len(ra), n_items=len(ka), n_items_b=len(kb),
        acc_a=r10(pa.mean), acc_b=r10(pb.mean), diff=r10(pb.mean - pa.mean), ci_low=r10(lo),
        ci_high=r10(hi), both_right=None, a_only=None, b_only=None, both_wrong=None,
        p_value=r10(p), p_holm=None, test="newcombe", tests_disagree=(lo > 0 or hi < 0) != (
            p < ALPHA),
    )


def macro_stats(per_task: Sequence[tuple[str, PairedStat]]) -> tuple[list[MacroStat], MacroStat]:
    """Suite and overall scores of A and B (leaderboard definitions) and the MOVER interval of
    their difference over the tasks' own intervals."""
    suites = {t: suite_of(t) for t, _ in per_task}
    stat = dict(per_task)
    sa_, oa = macro_scores({t: s.acc_a for t, s in per_task}, suites)
    sb_, ob = macro_scores({t: s.acc_b for t, s in per_task}, suites)
    by: dict[str, list[str]] = {}
    for t, _ in per_task:
        by.setdefault(suites[t], []).append(t)

    def terms(ts: Sequence[str], w: float) -> list[Term]:
        return [Term(w, stat[t].diff, stat[t].ci_low, stat[t].ci_high) for t in ts]

    def macro(scope: str, a: float, b: float, ts: list[Term], n: int) -> MacroStat:
        lo, hi = sum_interval(ts)
        return MacroStat(scope=scope, n_tasks=n, acc_a=r10(a), acc_b=r10(b), diff=r10(b - a),
                         ci_low=r10(lo), ci_high=r10(hi))

    per_suite = [macro(s, sa_[s], sb_[s], terms(by[s], 1.0 / len(by[s])), len(by[s]))
                 for s in sa_]
    assert oa is not None and ob is not None
    overall = [x for ts in by.values() for x in terms(ts, 1.0 / (len(ts) * len(by)))]
    return per_suite, macro("overall", oa, ob, overall, len(per_task))


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
        with open_samples(src) as f:  # the matched-exemplar control is not the task's answer
            return [r for line in f if line.strip()
                    if (r := SampleRecord.model_validate_json(line)).condition != MATCHED]
    except (OSError, ValueError, ValidationError) as e:
        raise HarnessError(f"{path}: cannot read samples: {str(e).splitlines()[0]}") from None


def _pair(sa: list[SampleRecord], sb: list[SampleRecord]) -> list[_Pair] | None:
    """The matched samples when both runs have exactly the same ones (bucket, prompt and target
    alike), keyed by task, template, condition and item id (items of two tasks may share an
    id); None when they differ and so may not be paired."""
    ka = {(s.task, s.template, s.condition, s.id): s for s in sa}
    kb = {(s.task, s.template, s.condition, s.id): s for s in sb}
    if set(ka) != set(kb):
        return None
    for k, a in ka.items():
        b = kb[k]
        if (a.bucket, a.prompt, a.target) != (b.bucket, b.prompt, b.target):
            return None
    return [(ka[k], kb[k]) for k in sorted(ka)]


def _pair_items(sa: list[SampleRecord], sb: list[SampleRecord]) -> list[_Pair] | None:
    """For a variant against the task whose items it evaluates (``items_from``: the prompts
    differ): the samples of each item, paired in (template, condition) order, when both runs
    have the same items (ids, buckets, difficulties, targets) with as many samples each."""
    ga: dict[str, list[SampleRecord]] = {}
    gb: dict[str, list[SampleRecord]] = {}
    for s in sa:
        ga.setdefault(s.id, []).append(s)
    for s in sb:
        gb.setdefault(s.id, []).append(s)
    if set(ga) != set(gb):
        return None
    pairs: list[_Pair] = []
    for item in sorted(ga):
        a = sorted(ga[item], key=lambda r: (r.template, r.condition))
        b = sorted(gb[item], key=lambda r: (r.template, r.condition))
        same = {(r.bucket, r.difficulty, r.target) for r in a} == {
            (r.bucket, r.difficulty, r.target) for r in b}
        if len(a) != len(b) or not same:
            return None
        pairs += [(x, y.model_copy(update={"task": x.task})) for x, y in zip(a, b, strict=True)]
    return pairs


def _variants(ra: Results, rb: Results, names_a: list[str],
              names_b: list[str]) -> list[tuple[str, str]]:
    """Tasks of one run matched to those of the other whose items they evaluate
    (``items_from``), for tasks that only one run has."""
    out = []
    only_b = [t for t in rb.tasks if t.task not in names_a]
    for t in ra.tasks:
        if t.task in names_b:
            continue
        of = t.spec.get("items_from")
        match = next((b.task for b in only_b if b.spec.get("items_from") == t.task
                      or (of is not None and b.task == of)), None)
        if match is not None:
            out.append((t.task, match))
    return out


def _task(task: str, sa: list[SampleRecord], sb: list[SampleRecord],
          variant: bool = False) -> TaskComparison:
    pairs = _pair_items(sa, sb) if variant else _pair(sa, sb)
    if pairs is not None:
        by_bucket: dict[tuple[int, str], list[_Pair]] = {}
        for p in pairs:
            by_bucket.setdefault((p[0].bucket_index, p[0].bucket), []).append(p)
        return TaskComparison(task=task, overall=paired_stat(pairs, "all", None), buckets=[
            paired_stat(ps, label, ps[0][0].role) for (_, label), ps in sorted(by_bucket.items())])
    ba: dict[tuple[int, str], list[SampleRecord]] = {}
    bb: dict[str, list[SampleRecord]] = {}
    for r in sa:
        ba.setdefault((r.bucket_index, r.bucket), []).append(r)
    for r in sb:
        bb.setdefault(r.bucket, []).append(r)
    return TaskComparison(task=task, overall=unpaired_stat(sa, sb, "all", None), buckets=[
        unpaired_stat(rs, bb[label], label, rs[0].role)
        for (_, label), rs in sorted(ba.items()) if label in bb])


def compare_runs(path_a: Path, path_b: Path, tasks: Sequence[str] | None = None) -> Comparison:
    """Compare two runs: item by item where their items are identical, else as independent
    samples (see module)."""
    path_a = path_a / "results.json" if path_a.is_dir() else path_a
    path_b = path_b / "results.json" if path_b.is_dir() else path_b
    ra, rb = load_results(path_a), load_results(path_b)
    names_a, names_b = [t.task for t in ra.tasks], [t.task for t in rb.tasks]
    variants = dict(_variants(ra, rb, names_a, names_b))  # A's task -> B's variant (or base)
    if tasks:
        missing = [t for t in tasks if t not in variants and (t not in names_a
                                                              or t not in names_b)]
        if missing:
            raise HarnessError(f"--tasks: {', '.join(missing)} not in both runs")
        chosen = [t for t in names_a if t in tasks]
    else:
        diff = sorted((set(names_a) - set(variants)) ^ (set(names_b) - set(variants.values())))
        if diff:
            raise HarnessError(f"runs differ in tasks: in only one run: {', '.join(diff)} "
                               "(pick common ones with --tasks; a variant is paired with the "
                               "task whose items it evaluates when its items_from names it)")
        chosen = names_a
    out: list[TaskComparison] = []
    all_a: list[SampleRecord] = []
    all_b: list[SampleRecord] = []
    variant_pairs: list[_Pair] = []
    for task in chosen:
        other = variants.get(task, task)
        sa, sb = _samples(path_a, ra, task), _samples(path_b, rb, other)
        if not sa or not sb:
            continue
        all_a += sa
        all_b += sb
        label = task if other == task else f"{task} vs {other}"
        out.append(_task(label, sa, sb, variant=other != task))
        if other != task:
            variant_pairs += _pair_items(sa, sb) or []
    if not out:
        raise HarnessError(f"{path_a} and {path_b}: no samples to compare")
    adjusted = holm([t.overall.p_value for t in out])
    out = [t.model_copy(update={"overall": t.overall.model_copy(update={"p_holm": r10(p)})})
           for t, p in zip(out, adjusted, strict=True) if p is not None]
    paired = all(t.overall.paired for t in out)
    suites, overall = macro_stats([(t.task, t.overall) for t in out])
    if paired and variants:  # a variant's prompts differ from its base's: its items pair
        plain = _pair([r for r in all_a if r.task not in variants],
                      [r for r in all_b if r.task not in set(variants.values())]) or []
        pooled = paired_stat(plain + variant_pairs, "all", None, cluster="task")
    else:
        pooled = (paired_stat(_pair(all_a, all_b) or [], "all", None, cluster="task") if paired
                  else unpaired_stat(all_a, all_b, "all", None, cluster="task"))
    return Comparison(
        run_a=str(path_a), run_b=str(path_b), model_a=f"{ra.model.backend}:{ra.model.name}",
        model_b=f"{rb.model.backend}:{rb.model.name}", seed=ra.run.seed, seed_b=rb.run.seed,
        paired=paired, level=LEVEL, tasks=out, suites=suites, overall=overall, pooled=pooled,
    )
