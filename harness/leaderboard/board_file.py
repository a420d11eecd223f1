"""leaderboard.json: the merged, ranked view of many runs (pydantic models, schema-versioned).

Bucket tables and gaps are those of a task's *primary report* (the first (template, condition)
report of the run); accuracies, suite and overall scores pool every template and condition, and
their intervals come from an item-level bootstrap over the copied per-sample files (see
:mod:`harness.leaderboard.scores`). Macro averages weigh every task equally.
See docs/leaderboards.md for the definitions of the derived columns.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from harness.leaderboard.board_base import _listed, _Model, _optional, _sparse
from harness.leaderboard.board_cells import AnalysisCell as AnalysisCell
from harness.leaderboard.board_cells import BucketCell as BucketCell
from harness.leaderboard.board_cells import BucketInfo as BucketInfo
from harness.leaderboard.board_cells import GapCell as GapCell
from harness.leaderboard.board_cells import HorizonCell as HorizonCell
from harness.leaderboard.board_cells import MetricCells as MetricCells
from harness.leaderboard.board_cells import Split as Split

LEADERBOARD_SCHEMA_VERSION = 5  # 5: baselines, edge gap, difficulty + shift, common tasks
LEADERBOARD_KIND = "genharness-leaderboard"


def engine_label(backend: str, dtype: str | None) -> str:
    """A run's engine and weight type in one label, e.g. "hf float32", "llamacpp F16" (the board's
    engine column and the cost table's ``engine``)."""
    return f"{backend} {dtype}" if dtype else backend



class ModelCard(_Model):
    """Who produced an entry's numbers: public model identity, run options, harness version."""

    backend: str  # model backend, e.g. "hf"
    name: str  # model name as given to --model (after the backend prefix)
    public_id: str  # public identifier: "package==version", "hub-id@revision" or a local label
    revision: str | None  # hub revision, where known
    weights_sha256: str | None  # hash of the weight file(s), where computed
    dtype: str | None  # parameter dtype, e.g. "float32"
    device: str | None  # where the model ran
    seed: int  # run seed
    limits_per_bucket: list[int | None]  # --limit-per-bucket of the merged runs (None: all items)
    config: dict[str, Any]  # the run options that define the configuration (see collect.py)
    harness_versions: list[str]  # genharness versions of the merged runs
    git_commits: list[str]  # harness git commits of the merged runs (where known)
    upstream: str | None = _optional()  # a built-in alias's upstream model
    licence: str | None = _optional()  # a built-in alias's licence and the package's own
    source_format: str | None = _optional()  # an alias's shipped GGUF and what ran (provenance)
    upstream_file: str | None = _optional()  # "<hub repo>/<file>" weights_sha256 is the hash of

    @property
    def engine(self) -> str:
        """Engine and weight type as the board names them (:func:`engine_label`); for a built-in
        alias, the engine and its weights' source format ("hf Q4_1 GGUF (4-bit), dequantized to
        float32")."""
        return (f"{self.backend} {self.source_format}" if self.source_format
                else engine_label(self.backend, self.dtype))


class Score(_Model):
    """A suite or overall score with its score interval (stratified by task and bucket)."""

    value: float | None  # the score (fraction)
    ci_low: float | None  # 95% lower bound (None: no per-sample files to read)
    ci_high: float | None  # 95% upper bound
    n_tasks: int  # tasks it averages


class Entry(_Model):
    """One leaderboard row: one model under one configuration, over every task it was run on."""

    id: str  # file-name-safe unique id (used for page names and per-sample folders)
    label: str  # display name: the model name, plus the configuration when a model has several
    family: str | None  # model family (name without a trailing -s<seed>), when it has one
    group: int  # task-set group: entries are ranked only against entries with the same tasks
    rank: int  # point rank within its group (1 = best overall); ties share the smallest rank
    rank_low: int  # best rank within the group: 1 + entries whose overall CI lies above this one's
    rank_high: int  # worst rank: group size − entries whose overall CI lies below this one's
    overall: Score  # mean of the suite scores over the tasks off the floor for every entry of
    # the group (n_tasks: their count); the group is ranked by it
    overall_all: Score | None = _optional()  # mean of the suite scores over every task
    suite_scores: dict[str, Score]  # suite → mean task accuracy (every template pooled) over the
    # suite's tasks off the floor for every entry of the group
    id_accuracy: float | None  # macro mean of the tasks' pooled ID accuracy
    ood_accuracy: float | None  # macro mean of the tasks' pooled OOD accuracy
    gap: float | None  # macro mean of the ID − OOD gaps over the group's common measured tasks
    gap_ci_low: float | None  # its 95% lower bound (MOVER over those tasks' own intervals)
    gap_ci_high: float | None  # its 95% upper bound
    gap_p_holm: float | None  # Holm-adjusted p of mean gap = 0 (inverted interval; over entries)
    n_gap_tasks: int  # tasks the mean gap covers: measured for every entry of the group
    n_measured: int  # tasks whose gap is measured for this entry
    n_floor: int  # tasks at the floor (pooled ID not above its baseline): no gap
    n_constant: int  # tasks where the primary report has a constant answerer (a bucket or role)
    n_ceiling: int  # tasks at the ceiling (both roles at 100%): no gap
    retention: float | None  # mean OOD / mean ID over the measured tasks with both roles
    horizon_factor: float | None  # mean extrapolation horizon ×ID over the measured tasks
    n_horizon: int  # tasks the horizon mean covers
    d50_factor: float | None = _optional()  # median d50 ×ID over the tasks searched for every
    # entry of the group, censored ones counted where they lie: its lower bound
    d50_factor_high: float | None = _optional()  # its upper bound (None: unbounded, "≥")
    n_d50: int | None = _optional()  # tasks that median covers (d50 measured or censored)
    n_d50_above: int | None = _optional()  # of those, tasks still above the midpoint at the end
    gaps: dict[str, float | None] = _sparse()  # other registered gap → its value over the tasks
    gaps_n: dict[str, int] = _sparse()  # other registered gap → tasks with a value
    analyses: dict[str, float | None]  # analysis name → mean headline value over tasks having it
    analyses_n: dict[str, int]  # analysis name → tasks with a value (tasks off the floor)
    analyses_floor_only: list[str] = _listed()  # analyses whose values all come from floor tasks
    n_tasks: int  # tasks the entry covers
    card: ModelCard  # model card


class SeedSuccess(_Model):
    """What a family's seeds show on one task (``leaderboard/families``): members that fit the
    ID range, those that generalize (Madsen & Johansen's success rate, over fitted members
    only), how far the family extends, and its verdict."""

    threshold: float  # pooled ID accuracy that fits, pooled OOD accuracy that succeeds (0.9)
    succeeded: int  # fitted members whose pooled OOD accuracy reaches the threshold
    members: int  # members with OOD items on the task
    fitted: int | None = None  # members whose pooled ID accuracy and last ID bucket's (the
    # ID edge) both reach the threshold: the members read for generalization
    id_fitted: int | None = _optional()  # members whose pooled ID accuracy reaches it
    format: str | None = _optional()  # the task format (prompt and answer) it was trained and
    # tested on, where the caller knows it: contrasts compare families on one format only
    rate: float | None  # succeeded / fitted (None: no member fitted)
    ci_low: float | None  # Wilson 95% lower bound of the rate (fitted members as the trials)
    ci_high: float | None  # Wilson 95% upper bound
    edge_succeeded: int | None = None  # fitted members at the threshold in the first OOD bucket
    extent: float | None = None  # largest difficulty up to which every bucket's success rate
    # (fitted members at the threshold there) stays at it, from the last ID bucket outward
    extent_factor: float | None = None  # extent / the largest ID difficulty
    edge_gap: float | None = None  # mean over fitted members of last ID − first OOD bucket
    verdict: str | None = None  # the family's verdict on the task, in words


class FamilyRow(_Model):
    """Entries of one model family (e.g. training seeds): spread of their scores."""

    family: str  # family name
    members: list[str]  # Entry.id of each member
    tasks: list[str]  # tasks every member covers
    overall_mean: float | None  # mean of the members' overall scores
    overall_sd: float | None  # sample standard deviation (None with one member)
    overall_min: float | None  # lowest member overall score
    overall_max: float | None  # highest member overall score
    task_stats: dict[str, list[float | None]]  # task → [mean, sd, min, max] of member accuracy
    success: dict[str, SeedSuccess] = {}  # task with OOD buckets → members that generalize


class TaskRow(_Model):
    """One entry on one task: accuracy over every sample, gaps of the primary report."""

    entry: str  # Entry.id
    template: str  # template of the primary report
    condition: str  # few-shot condition of the primary report ("" when none)
    n_reports: int  # (template, condition) reports the run has for this task
    n_items: int  # items (each counted once, however many templates it ran under)
    n_samples: int  # samples (items × templates × conditions)
    accuracy: float | None  # accuracy over every sample (all templates and conditions but the
    # matched-exemplar control, which is a control, not the task's answer)
    n_id: int  # ID samples of the primary report
    n_ood: int  # OOD samples of the primary report
    id_accuracy: float | None  # pooled ID accuracy (primary report)
    ood_accuracy: float | None  # pooled OOD accuracy (primary report)
    status: str  # "measured", "floor" (ID not above its baseline) or "ceiling" (both at 100%)
    chance: float  # chance level of the ID items (0 for generation)
    status_reason: str | None  # why no gap is shown, when status is not "measured"
    gap: float | None  # ID − OOD gap (None unless measured)
    gap_ci_low: float | None  # its 95% lower bound (results.json's Newcombe interval)
    gap_ci_high: float | None  # its 95% upper bound
    gap_p_holm: float | None  # Holm-adjusted p of gap = 0 over every measured gap on the board
    retention: float | None  # OOD / ID
    retention_ci_low: float | None  # its 95% lower bound (results.json's MOVER-R interval)
    retention_ci_high: float | None  # its 95% upper bound (None: unbounded/unknown)
    retention_unbounded: bool  # the upper bound is unbounded (the ID lower limit is 0)
    horizon: float | None  # extrapolation horizon (difficulty value)
    horizon_factor: float | None  # horizon / largest ID difficulty
    d50: HorizonCell | None = _optional()  # the adaptive search's d50 (ID exemplars)
    d50_matched: HorizonCell | None = _optional()  # d50 with exemplars from the item's own level
    baseline: float | None = None  # pooled ID baseline: the best constant answer's score
    ood_baseline: float | None = None  # pooled OOD baseline
    constant: bool = False  # a bucket or role of the primary report has a constant answerer
    budget_bound: list[str] = Field(  # buckets the gaps rest on whose wrong answers the answer
        default_factory=list, exclude_if=lambda v: not v)  # budget cut (answers/budget)
    edge: Split | None = None  # last ID bucket − first OOD bucket (measured reports)
    edge_buckets: str | None = None  # "ID label → OOD label" of the edge gap
    edge_p_holm: float | None = _optional()  # Holm-adjusted p of edge = 0 over the board's edges
    exemplars: bool = True  # the task shows exemplars (False: the gap is a difficulty gap)
    difficulty: Split | None = None  # acc(ID) − acc(OOD | matched exemplars)
    shift: Split | None = None  # acc(OOD | matched) − acc(OOD | ID exemplars), paired
    gaps: dict[str, GapCell] = _sparse()  # other registered gaps (measured reports) by name
    buckets: list[BucketCell]  # per-bucket accuracy (primary report), in bucket order
    metrics: dict[str, MetricCells] = _sparse()  # the task's other metrics by name (primary
    # report; scoring.metrics after its first)
    analyses: list[AnalysisCell]  # task-level analyses of the run
    spec_sha256: str  # hash of the resolved task spec the run used
    source: str  # the board's copy of the results.json the row comes from
    samples: str | None  # per-sample file relative to the leaderboard folder (None: not copied)
    viewer: str | None  # sample viewer page relative to the leaderboard folder


class PairTest(_Model):
    """Two entries on one task: B − A, item by item only where their items are identical."""

    a: str  # Entry.id of A
    b: str  # Entry.id of B
    paired: bool  # the same items (ids, prompts, targets): paired; else two independent samples
    n_items: int  # A's items (paired: the common items)
    n_items_b: int  # B's items
    diff: float  # accuracy of B − accuracy of A (every sample pooled)
    ci_low: float  # 95% lower bound (paired MOVER, or Newcombe's for independent samples)
    ci_high: float  # 95% upper bound
    a_better: int | None  # items where A scores higher (paired only)
    b_better: int | None  # items where B scores higher (paired only)
    test: str  # sign test (paired), or "newcombe" (inverted unpaired interval)
    p: float  # its p-value
    p_holm: float  # Holm-adjusted over every pair test on the board


class TemplateInfo(_Model):
    """One prompt template of a task."""

    id: str  # template id
    prompt: str  # the Jinja2 template text


class TaskBoard(_Model):
    """Everything the leaderboard shows about one task."""

    task: str  # task address, e.g. "lengthgen/addition"
    suite: str  # suite the task is counted under (the address's first part)
    description: str  # what the task measures
    citations: list[str]  # papers the task follows
    card: dict[str, Any] | None  # generalization card: axis, shift, locus
    difficulty_name: str  # name of the difficulty variable
    templates: list[TemplateInfo]  # prompt templates of the spec
    fewshot: str  # few-shot setting, in words
    shift_in: str = ""  # where ID and OOD differ for the model: exemplars and input, or input only
    metric: str  # scoring metric (and output type)
    example_prompt: str | None  # the first sample's exact prompt (None: no samples copied)
    buckets: list[BucketInfo]  # union of the entries' buckets, in axis order
    rows: list[TaskRow]  # one per entry that ran the task, in rank order
    pairs: list[PairTest]  # pairwise tests between entries with the same items
    stale: bool  # the spec hash differs from this checkout's task (rerun it)


class SourceRun(_Model):
    """One results.json given to ``harness leaderboard build`` (copied under runs/)."""

    path: str  # the board's copy, relative to the leaderboard folder
    sha256: str  # sha256 of the results.json bytes
    model: str  # backend:name
    public_id: str  # public model identifier (never a local path)
    entry: str  # Entry.id it contributes to ("": none of its tasks is on the board)
    tasks: list[str]  # tasks it holds
    used_tasks: list[str]  # of those, the ones it is the last given run for
    spec_sha256: dict[str, str]  # task → hash of the resolved spec it ran
    harness_version: str  # genharness version that wrote it
    git_commit: str | None  # harness commit it ran at
    git_dirty: bool | None  # uncommitted changes under harness/ or tasks/ at that commit
    cache_hits: int | None  # requests answered from the response cache (None: no cache)
    cache_misses: int | None  # requests sent to the model
    target_ci: float | None = _optional()  # the --target-ci half-width it was sized with
    reproduce: str  # the command that reruns it


class Conflict(_Model):
    """Two runs of the same model, task and configuration whose numbers differ."""

    entry: str  # Entry.id
    task: str  # task address
    kept: str  # the results.json given later (its numbers are shown)
    dropped: str  # the one given earlier
    reason: str  # what differs


class EntryPrecision(_Model):
    """One entry's precision target and how many of its task rows meet it."""

    entry: str  # Entry.id
    target: float  # its rows' target half-width (the board's, or their --target-ci)
    min_per_bucket: int  # items every bucket should have (0 for rows sized with --target-ci)
    sized: bool  # its rows were sized with --target-ci (judged against their own half-width)
    meeting: int  # its task rows that meet the target
    rows: int  # its task rows


class Precision(_Model):
    """The precision the board states, and how its tasks meet it."""

    target: float  # pooled ID and OOD accuracy within ± this (95%): the farther interval end
    min_per_bucket: int  # items every bucket should have
    tasks_meeting: int  # task rows (entry × task) that meet both
    task_rows: int  # task rows on the board
    short: list[str]  # "entry task: why" for each row that misses it
    worst: float | None = None  # the largest reach of any row's pooled ID or OOD interval
    worst_row: str | None = None  # "entry task role" of that row
    sized: list[str] = _listed()  # per entry with rows sized by --target-ci: what they meet
    entries: list[EntryPrecision] = _listed()  # each entry's own target (board order)


class BuildOptions(_Model):
    """The options the board was built with (a rebuild from its runs/ uses them again)."""

    title: str  # --title
    samples: str  # --samples: copy or none
    gzip_samples: bool  # --gzip-samples
    png: bool  # --png
    skip_invalid: bool  # --skip-invalid
    target: float  # --target
    min_per_bucket: int  # --min-per-bucket
    compare: list[str]  # the board's copies of the compare --json files it publishes


class Leaderboard(_Model):
    """The whole leaderboard.json."""

    schema_version: int  # bumped on incompatible changes
    kind: str  # always "genharness-leaderboard"
    title: str  # human title
    harness_version: str  # genharness version that built the leaderboard
    correction: str  # multiplicity correction of the significance marks
    precision: Precision  # stated precision target and how the rows meet it
    stale_tasks: list[str]  # tasks whose spec differs from this checkout's (rerun them)
    suites: list[str]  # suites present, in canonical order
    entries: list[Entry]  # rows, by group then rank
    families: list[FamilyRow]  # model families with several members
    tasks: list[TaskBoard]  # per-task tables, by suite then name
    sources: list[SourceRun]  # the merged results files, in the order given (the last wins)
    conflicts: list[Conflict]  # duplicates that disagreed
    build: BuildOptions | None = None  # how it was built
