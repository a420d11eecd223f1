"""leaderboard.json: the merged, ranked view of many runs (pydantic models, schema-versioned).

Every number comes from the runs' results.json files; nothing is recomputed from samples. A
task's numbers are those of its *primary report*: the first (template, condition) report of the
run, i.e. the task's default template and first few-shot condition. Macro averages weigh every
task equally. See docs/leaderboards.md for the definitions of the derived columns.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

LEADERBOARD_SCHEMA_VERSION = 1
LEADERBOARD_KIND = "genharness-leaderboard"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ModelCard(_Model):
    """Who produced an entry's numbers: model identity, run options and harness version."""

    backend: str  # model backend, e.g. "hf"
    name: str  # model name as given to --model (after the backend prefix)
    path: str | None  # resolved local path or hub id that was loaded
    revision: str | None  # hub revision, where known
    weights_sha256: str | None  # hash of the weight file(s), where computed
    dtype: str | None  # parameter dtype, e.g. "float32"
    device: str | None  # where the model ran
    seed: int  # run seed
    limit_per_bucket: int | None  # cap on items per bucket of the runs
    config: dict[str, Any]  # the run options that define the configuration (see collect.py)
    harness_versions: list[str]  # genharness versions of the merged runs
    git_commits: list[str]  # harness git commits of the merged runs (where known)


class Entry(_Model):
    """One leaderboard row: one model under one configuration, over every task it was run on."""

    id: str  # file-name-safe unique id (used for page names and per-sample folders)
    label: str  # display name: the model name, plus the configuration when a model has several
    rank: int  # 1 = best overall score; ties share the smallest rank
    overall: float | None  # mean of the suite scores the entry has
    suite_scores: dict[str, float | None]  # suite → mean task accuracy over the suite's tasks
    id_accuracy: float | None  # macro mean of the tasks' pooled ID accuracy
    ood_accuracy: float | None  # macro mean of the tasks' pooled OOD accuracy
    gap: float | None  # macro mean of the tasks' ID − OOD gaps
    gap_ci_low: float | None  # lower 95% bound of the mean gap (normal approx. of task CIs)
    gap_ci_high: float | None  # upper 95% bound of the mean gap
    retention: float | None  # ood_accuracy / id_accuracy over tasks with both roles
    horizon_factor: float | None  # mean extrapolation horizon as a multiple of the largest ID value
    analyses: dict[str, float | None]  # analysis name → mean headline value over tasks having it
    n_tasks: int  # tasks the entry covers
    card: ModelCard  # model card


class BucketInfo(_Model):
    """One bucket of a task's difficulty axis."""

    label: str  # bucket label, e.g. "7" or "6-10"
    index: int  # position on the difficulty axis
    role: str  # "ID" or "OOD"
    lo: float  # smallest difficulty value
    hi: float  # largest (per-value) or exclusive upper edge (ranges)


class BucketCell(_Model):
    """Accuracy of one entry in one bucket."""

    label: str  # bucket label
    n: int  # scored samples
    accuracy: float | None  # accuracy; None when the bucket is empty
    ci_low: float | None  # Wilson 95% lower bound
    ci_high: float | None  # Wilson 95% upper bound


class AnalysisCell(_Model):
    """A task-level analysis of one entry (compositionality gap, SGR, CPS, effective length, …)."""

    name: str  # analysis name
    value: float | None  # headline value
    ci_low: float | None  # lower 95% bound, where defined
    ci_high: float | None  # upper 95% bound, where defined
    n: int  # items the value rests on


class TaskRow(_Model):
    """One entry's primary report on one task."""

    entry: str  # Entry.id
    template: str  # template of the primary report
    condition: str  # few-shot condition of the primary report ("" when none)
    n_reports: int  # (template, condition) reports the run has for this task
    accuracy: float | None  # accuracy pooled over every bucket
    id_accuracy: float | None  # pooled ID accuracy
    ood_accuracy: float | None  # pooled OOD accuracy
    gap: float | None  # ID − OOD gap
    gap_ci_low: float | None  # its bootstrap 95% lower bound
    gap_ci_high: float | None  # its bootstrap 95% upper bound
    retention: float | None  # OOD / ID
    retention_ci_low: float | None  # its bootstrap 95% lower bound
    retention_ci_high: float | None  # its bootstrap 95% upper bound
    horizon: float | None  # extrapolation horizon (difficulty value)
    horizon_factor: float | None  # horizon / largest ID difficulty
    buckets: list[BucketCell]  # per-bucket accuracy, in the task's bucket order
    analyses: list[AnalysisCell]  # task-level analyses of the run
    spec_sha256: str  # hash of the resolved task spec the run used
    source: str  # the results.json the row comes from (as given on the command line)
    samples: str | None  # per-sample file relative to the leaderboard folder (None: not copied)


class TaskBoard(_Model):
    """Everything the leaderboard shows about one task."""

    task: str  # task address, e.g. "lengthgen/addition"
    suite: str  # suite the task is counted under (the address's first part)
    description: str  # what the task measures
    citations: list[str]  # papers the task follows
    card: dict[str, Any] | None  # generalization card: axis, shift, locus
    difficulty_name: str  # name of the difficulty variable
    buckets: list[BucketInfo]  # union of the entries' buckets, in axis order
    rows: list[TaskRow]  # one per entry that ran the task, in rank order


class SourceRun(_Model):
    """One results.json given to ``harness leaderboard build``."""

    path: str  # as given on the command line
    model: str  # backend:name
    entry: str  # Entry.id it contributes to ("": none of its tasks is on the board)
    tasks: list[str]  # tasks it holds
    used_tasks: list[str]  # of those, the ones it is the latest run for
    harness_version: str  # genharness version that wrote it
    mtime: float  # modification time (decides which duplicate is the latest)


class Conflict(_Model):
    """Two runs of the same model, task and configuration whose numbers differ."""

    entry: str  # Entry.id
    task: str  # task address
    kept: str  # the newer results.json (its numbers are shown)
    dropped: str  # the older one
    reason: str  # what differs


class Leaderboard(_Model):
    """The whole leaderboard.json."""

    schema_version: int  # bumped on incompatible changes
    kind: str  # always "genharness-leaderboard"
    title: str  # human title
    harness_version: str  # genharness version that built the leaderboard
    suites: list[str]  # suites present, in canonical order
    entries: list[Entry]  # rows, best first
    tasks: list[TaskBoard]  # per-task tables, by suite then name
    sources: list[SourceRun]  # the merged results files
    conflicts: list[Conflict]  # duplicates that disagreed
