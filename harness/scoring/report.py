"""Per-template reports: bucket and role accuracies plus gaps, computed from sample records only.

``report_from_scores`` is the single place results are computed, from each bucket's scores in
item-id order. ``task_reports`` feeds it from sample records: anyone can recompute the numbers of
results.json from ``samples/<task>.jsonl``. The runner feeds it from ``ScoreColumns``, the few
numbers per sample the reports need, kept in compact columns while the records themselves stream
to disk (memory stays flat with the number of items). The gap bootstrap is seeded with
``derive_seed(seed, task, template, "gaps")`` and items are ordered by id within a bucket, so the
numbers do not depend on the order of the records.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from harness.answers.metrics import checked_metric
from harness.gaps.report import GapReport, chance_level, gaps_from_scores, sample_chance
from harness.gaps.shift import MATCHED, ShiftSplit, shift_split
from harness.scoring.aggregates import (
    ROLES,
    BucketAggregate,
    Level,
    RoleAggregate,
    bucket_position,
    bucket_rows,
    metric_score,
    role_rows,
    scores_by_bucket,
)
from harness.scoring.baselines import (
    Answer,
    AnswerKey,
    answer,
    answer_key,
    concentration,
    constant_baseline,
    cut_shares,
)
from harness.scoring.records import SampleRecord
from harness.seeding import derive_seed
from harness.spec.buckets import Bucket, Role
from harness.spec.scoring import ExtractSpec, GapsSpec

DEFAULT_METRIC = "exact_match"  # the metric a constant answer is scored with when none is given


class MetricReport(BaseModel):
    """Another metric of ``scoring.metrics``: its score per bucket and per role, with the
    primary metric's intervals (no baselines: those are the primary metric's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str  # the metric's registered name
    buckets: list[BucketAggregate]  # one row per bucket, in bucket order (as the primary's)
    roles: list[RoleAggregate]  # ID then OOD, pooled over items


class TemplateReport(BaseModel):
    """Everything measured for one prompt template of one task."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    template: str  # prompt template id
    condition: str = ""  # few-shot condition id ("" when the task declares none)
    n: int  # scored samples under this template
    buckets: list[BucketAggregate]  # one row per bucket, in bucket order (empty buckets included)
    roles: list[RoleAggregate]  # ID then OOD, pooled over items
    gaps: GapReport  # the gaps the task asked for
    metrics: list[MetricReport] = Field(  # the other metrics of scoring.metrics, in order
        default_factory=list, exclude_if=lambda v: not v)


def template_report(
    samples: Sequence[SampleRecord],
    buckets: Sequence[Bucket],
    gaps_spec: GapsSpec,
    seed: int,
    metric: str = DEFAULT_METRIC,
    extras: Sequence[str] = (),
    extract: ExtractSpec | None = None,
) -> TemplateReport:
    """The report for samples of one task and one template (``seed``: the run seed; ``metric``:
    the task's metric, which scores the constant answers of the baselines; ``extras``: the
    other metrics of ``scoring.metrics``, whose scores each sample carries; ``extract``: the
    task's ``scoring.extract``, which makes the baselines' candidate answers)."""
    if not samples:
        raise ValueError("template_report: no samples")
    task, template, cond = samples[0].task, samples[0].template, samples[0].condition
    for s in samples:
        if (s.task, s.template, s.condition) != (task, template, cond):
            raise ValueError(
                f"template_report: samples mix {task!r}/{template!r}/{cond!r} with "
                f"{s.task!r}/{s.template!r}/{s.condition!r}"
            )
    chance = chance_level([s for s in samples if s.role == "ID"])
    by_index = {b.index: pos for pos, b in enumerate(buckets)}
    keyed: list[list[tuple[str, AnswerKey, Answer]]] = [[] for _ in buckets]
    for s in samples:
        keyed[bucket_position(s, by_index, buckets)].append((s.id, answer_key(s), answer(s)))
    for rows in keyed:
        rows.sort(key=lambda r: r[0])
    keys = [[k for _, k, _ in rows] for rows in keyed]
    answers = [[a for _, _, a in rows] for rows in keyed]
    return report_from_scores(task, template, cond, scores_by_bucket(samples, buckets), buckets,
                              gaps_spec, seed, chance, Judging(keys, answers, metric, extract),
                              {m: scores_by_bucket(samples, buckets, m) for m in extras})


class Judging:
    """Each bucket's answer keys and answers, in the order of its scores, and the metric: what
    the baselines and the answer concentrations are computed from (``scoring/baselines``)."""

    def __init__(self, keys: Sequence[Sequence[AnswerKey]], answers: Sequence[Sequence[Answer]],
                 metric: str = DEFAULT_METRIC, extract: ExtractSpec | None = None) -> None:
        self.keys, self.answers, self.metric = keys, answers, metric
        self.extract = extract  # the task's scoring.extract: the candidates' form

    def levels(self, buckets: Sequence[Bucket], declared: float | None
               ) -> tuple[list[Level], dict[Role, Level]]:
        """Each bucket's and each role's baseline (``declared``: the task's own, for all) and
        answer concentration."""
        fn = checked_metric(self.metric)

        def base(keys: Sequence[AnswerKey]) -> float | None:
            if not keys:
                return None
            return (declared if declared is not None
                    else constant_baseline(keys, fn, self.extract))

        per = [Level(base(k), concentration(a), *cut_shares(a))
               for k, a in zip(self.keys, self.answers, strict=True)]
        roles: dict[Role, Level] = {}
        for role in ROLES:
            at = [pos for pos, b in enumerate(buckets) if b.role == role]
            keys = [k for pos in at for k in self.keys[pos]]
            pooled = [a for pos in at for a in self.answers[pos]]
            roles[role] = Level(base(keys), concentration(pooled), *cut_shares(pooled))
        return per, roles


def report_from_scores(
    task: str, template: str, condition: str, per_bucket: Sequence[Sequence[float]],
    buckets: Sequence[Bucket], gaps_spec: GapsSpec, seed: int, chance: float = 0.0,
    judging: Judging | None = None, extras: Mapping[str, Sequence[Sequence[float]]] | None = None,
) -> TemplateReport:
    """The report of one (template, condition) of ``task`` from each bucket's scores, in bucket
    order and item-id order within a bucket (``seed``: the run seed; ``chance``: the ID items'
    chance level; ``judging``: what the baselines and answer concentrations come from;
    ``extras``: each other metric's per-bucket scores, in the same order)."""
    gap_seed = derive_seed(seed, task, template, "gaps", *([condition] if condition else []))
    per, roles = (judging.levels(buckets, gaps_spec.baseline) if judging is not None
                  else (None, None))
    id_base = None if roles is None else roles["ID"].baseline
    rows = bucket_rows(per_bucket, buckets, per)
    gaps = gaps_from_scores(per_bucket, buckets, gaps_spec, gap_seed, chance, id_base)
    bound = [r.bucket for r in rows if r.budget_bound]
    return TemplateReport(
        template=template,
        condition=condition,
        n=sum(len(scores) for scores in per_bucket),
        buckets=rows,
        roles=role_rows(per_bucket, buckets, roles),
        gaps=gaps.model_copy(update={"budget_bound": bound}) if bound else gaps,
        metrics=[MetricReport(metric=name, buckets=bucket_rows(scores, buckets),
                              roles=role_rows(scores, buckets))
                 for name, scores in (extras or {}).items()],
    )


def task_reports(
    samples: Iterable[SampleRecord],
    buckets: Sequence[Bucket],
    gaps_spec: GapsSpec,
    seed: int,
    metric: str = DEFAULT_METRIC,
    extras: Sequence[str] = (),
    extract: ExtractSpec | None = None,
) -> list[TemplateReport]:
    """One report per (template, condition), in order of first appearance (no samples: []);
    ``extras``: the other metrics of ``scoring.metrics``, reported in ``metrics``; ``extract``:
    the task's ``scoring.extract`` (the baselines' candidate answers).
    ``samples`` may be ``harness.run.results.SamplesFile.of(run_dir, task)``: the file is then
    checked against results.json's ``samples_sha256`` first (a mismatch is one-line error)."""
    groups: dict[tuple[str, str], list[SampleRecord]] = {}
    for s in samples:
        groups.setdefault((s.template, s.condition), []).append(s)
    return [template_report(g, buckets, gaps_spec, seed, metric, extras, extract)
            for g in groups.values()]


def shift_splits(reports: Sequence[TemplateReport], buckets: Sequence[Bucket],
                 item_scores: Callable[[str, str], list[dict[Hashable, float]]]
                 ) -> list[ShiftSplit]:
    """The difficulty + shift split (``gaps/shift``) of every template answered both with ID
    exemplars (condition "") and under the matched-exemplar control; ``item_scores(template,
    condition)`` gives each bucket's item → score."""
    conds = {(r.template, r.condition) for r in reports}
    out = []
    for r in reports:
        if r.condition != "" or (r.template, MATCHED) not in conds:
            continue
        split = shift_split(r.template, buckets, item_scores(r.template, ""),
                            item_scores(r.template, MATCHED), r.gaps.status)
        if split is not None:
            out.append(split)
    return out


def record_splits(samples: Iterable[SampleRecord], buckets: Sequence[Bucket],
                  reports: Sequence[TemplateReport]) -> list[ShiftSplit]:
    """``shift_splits`` from sample records (items paired by id)."""
    by_index = {b.index: pos for pos, b in enumerate(buckets)}
    cells: dict[tuple[str, str], list[dict[Hashable, float]]] = {}
    for s in samples:
        per = cells.setdefault((s.template, s.condition), [{} for _ in buckets])
        per[bucket_position(s, by_index, buckets)][s.id] = s.score
    return shift_splits(reports, buckets, lambda t, c: cells[(t, c)])


class ScoreColumns:
    """What the reports need of each sample, a few bytes per sample: its (template, condition)
    group, bucket, item-id rank, score (and each other metric's) and chance level, and its
    answer key and answer (the target and the extracted answer: short strings) for the
    baselines. ``reports`` gives exactly ``task_reports`` of the same records, given ranks that
    order the items by id within each bucket."""

    def __init__(self, task: str, buckets: Sequence[Bucket], extras: Sequence[str] = ()) -> None:
        self.task = task  # task address every sample must carry
        self.buckets = list(buckets)  # the task's ordered buckets
        self._extras = {m: array("d") for m in extras}  # other metrics' scores by name
        self._pos = {b.index: pos for pos, b in enumerate(self.buckets)}
        self._groups: dict[tuple[str, str], int] = {}  # (template, condition) → group number
        self._group, self._bucket = array("i"), array("i")
        self._rank, self._score, self._chance = array("q"), array("d"), array("d")
        self._keys: list[AnswerKey] = []
        self._answers: list[Answer] = []

    def __len__(self) -> int:
        return len(self._score)

    def add(self, s: SampleRecord, rank: int) -> None:
        """Add one sample; ``rank`` orders its item by id among the items of its bucket."""
        pos = bucket_position(s, self._pos, self.buckets)
        if s.task != self.task:
            raise ValueError(f"sample {s.id!r} of task {s.task!r} among samples of {self.task!r}")
        self._group.append(self._groups.setdefault((s.template, s.condition), len(self._groups)))
        self._bucket.append(pos)
        self._rank.append(rank)
        self._score.append(s.score)
        for m, column in self._extras.items():
            column.append(metric_score(s, m))
        self._chance.append(sample_chance(s))
        self._keys.append(answer_key(s))
        self._answers.append(answer(s))

    def item_scores(self, template: str, condition: str) -> list[dict[Hashable, float]]:
        """Each bucket's item (its id rank) → score, for one (template, condition)."""
        g = self._groups[(template, condition)]
        out: list[dict[Hashable, float]] = [{} for _ in self.buckets]
        for grp, pos, rank, score in zip(self._group, self._bucket, self._rank, self._score,
                                         strict=True):
            if grp == g:
                out[pos][rank] = score
        return out

    def splits(self, reports: Sequence[TemplateReport]) -> list[ShiftSplit]:
        """``shift_splits`` of these reports (items paired by their id rank)."""
        return shift_splits(reports, self.buckets, self.item_scores)

    def reports(self, gaps_spec: GapsSpec, seed: int, metric: str = DEFAULT_METRIC,
                extract: ExtractSpec | None = None) -> list[TemplateReport]:
        """One report per (template, condition), in order of first appearance (no samples: [])."""
        group = np.frombuffer(self._group, dtype=np.intc)
        bucket = np.frombuffer(self._bucket, dtype=np.intc)
        rank = np.frombuffer(self._rank, dtype=np.int64)
        score = np.frombuffer(self._score, dtype=np.float64)
        chance = np.frombuffer(self._chance, dtype=np.float64)
        is_id = np.array([b.role == "ID" for b in self.buckets], dtype=bool)[bucket]
        # by group, then bucket, then item id (then score, as sorting (id, score) pairs does)
        order = np.lexsort((score, rank, bucket, group))
        keys = group[order].astype(np.int64) * len(self.buckets) + bucket[order]
        cuts = np.searchsorted(keys, np.arange(len(self._groups) * len(self.buckets) + 1))
        out = []
        for (template, condition), g in self._groups.items():
            spans = [order[cuts[k]:cuts[k + 1]].tolist()
                     for k in range(g * len(self.buckets), (g + 1) * len(self.buckets))]
            per_bucket = [score[span].tolist() for span in spans]
            judging = Judging([[self._keys[i] for i in span] for span in spans],
                              [[self._answers[i] for i in span] for span in spans], metric,
                              extract)
            ids = (group == g) & is_id
            id_chance = (math.fsum(chance[ids].tolist()) / int(np.count_nonzero(ids))
                         if ids.any() else 0.0)
            extras = {m: [[column[i] for i in span] for span in spans]
                      for m, column in self._extras.items()}
            out.append(report_from_scores(self.task, template, condition, per_bucket,
                                          self.buckets, gaps_spec, seed, id_chance, judging,
                                          extras))
        return out
