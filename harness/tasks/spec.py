"""Pydantic models of a task file. Every field is documented in one line.

A task file (YAML) is validated into ``TaskSpec``; unknown keys are rejected (the loader adds a
"did you mean" hint). See ``tasks/lengthgen/addition.yaml`` for a complete example.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

GapName = Literal["id_ood", "retention", "horizon"]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class GeneratorSource(_Spec):
    """Items made by a registered, seeded procedural generator."""

    type: Literal["generator"]  # discriminator
    name: str  # generator registry name, e.g. "addition"
    params: dict[str, Any] = {}  # keyword parameters passed to the generator
    per_bucket: int = Field(100, ge=1)  # items generated per bucket (spread over its values)
    seed: int = 0  # task-level seed, combined with the run seed


class FilesSource(_Spec):
    """Items read from local files (one record per line / row)."""

    type: Literal["files"]  # discriminator
    path: str  # file path, relative to the task file; `~` and $VARS are expanded
    format: Literal["jsonl", "csv", "tsv", "auto"] = "auto"  # auto: from the file extension
    url: str | None = None  # download URL used when `path` is absent (cached; see fetch_file)
    sha256: str | None = None  # expected sha256 of the downloaded file (checked once)


class DatasetSource(_Spec):
    """Items from a Hugging Face `datasets` dataset, pinned to a revision."""

    type: Literal["dataset"]  # discriminator
    path: str  # hub dataset id or local dataset directory
    config: str | None = None  # dataset configuration name
    split: str = "test"  # split to evaluate
    revision: str | None = None  # hub commit / tag to pin (recommended)
    local_path: str | None = None  # local mirror used instead of `path` when it exists


SourceSpec = Annotated[GeneratorSource | FilesSource | DatasetSource, Field(discriminator="type")]


class FieldsSpec(_Spec):
    """Which record fields carry the target, the difficulty and the item id."""

    target: str = "target"  # field with the reference answer (MC: index or text of the gold choice)
    difficulty: str = "difficulty"  # numeric field used for bucketing
    id: str | None = None  # field with a stable item id; default: position in the source
    meta: list[str] = []  # record fields copied into each sample's `meta` (links, analyses)
    difficulty_pattern: str | None = None  # regex giving the number in e.g. "Level 3" (group 1)


class BucketsSpec(_Spec):
    """Ordered buckets over the difficulty value: one per value, or half-open ranges."""

    values: list[float] | None = None  # one bucket per listed value, in this order
    edges: list[float] | None = None  # ascending; bucket i holds edges[i] <= d < edges[i+1]
    quantiles: int | None = Field(None, ge=2)  # N equal-count buckets q1..qN cut from the data

    @model_validator(mode="after")
    def _one_kind(self) -> BucketsSpec:
        if self.quantiles is not None:
            if self.values is not None or self.edges is not None:
                raise ValueError("give exactly one of 'values', 'edges' or 'quantiles'")
            return self
        if (self.values is None) == (self.edges is None):
            raise ValueError("give exactly one of 'values' or 'edges'")
        seq = self.values if self.values is not None else self.edges
        assert seq is not None
        if self.edges is not None and len(seq) < 2:
            raise ValueError("'edges' needs at least two numbers")
        if any(b <= a for a, b in zip(seq, seq[1:], strict=False)):
            raise ValueError("values/edges must be strictly increasing")
        return self


class RolesSpec(_Spec):
    """Which buckets are in-distribution (ID); every other bucket is out-of-distribution (OOD)."""

    id_max: float | None = None  # buckets whose difficulty values are all <= id_max are ID
    id: list[str | float] | None = None  # explicit ID bucket labels (alternative to id_max)

    @model_validator(mode="after")
    def _one_kind(self) -> RolesSpec:
        if (self.id_max is None) == (self.id is None):
            raise ValueError("give exactly one of 'id_max' or 'id'")
        return self


class TemplateSpec(_Spec):
    """One named prompt variant (sandboxed Jinja2 over the item's fields)."""

    id: str  # short name, unique within the task
    prompt: str  # Jinja2 template rendering the question
    target: str | None = None  # Jinja2 template rendering an exemplar's answer; default: the target
    seen: bool = True  # multi-prompt: a "seen" (e.g. official) template, or an unseen paraphrase


class TemplatesFromSpec(_Spec):
    """Templates read from a paraphrase table (see ``harness.tasks.template_sets``)."""

    path: str  # paraphrase CSV (Mizrahi et al. format); `~`/$VARS expanded; relative: task folder
    url: str | None = None  # where users get the file (informational)
    ids: list[int] | None = None  # paraphrase indices to use; default: every eligible one
    limit: int | None = Field(None, ge=1)  # at most this many eligible paraphrases (seeded draw)
    sample_seed: int = 0  # seed of the `limit` draw
    methods: list[str] | None = None  # keep only these generation methods (e.g. rephrase)
    correct_only: bool = True  # drop paraphrases manually judged incorrect
    defaults: Literal["seen", "unseen", "skip"] = "skip"  # rows marked as default prompts
    mode: Literal["append", "replace"] = "append"  # add to `templates`, or replace them
    id_prefix: str = "p"  # template id = prefix + paraphrase index


class FewShotCondition(_Spec):
    """One exemplar condition of a protocol such as Supervision Gap Recovered (easy/hard/none)."""

    id: str  # condition name recorded in every sample, e.g. "easy"
    k: int | None = Field(None, ge=0)  # exemplars per prompt; default: fewshot.k
    pool: list[str | float] | None = None  # bucket labels exemplars come from; default: ID buckets
    evaluate: list[str | float] | None = None  # bucket labels evaluated; default: every bucket


class FewShotSpec(_Spec):
    """Few-shot exemplars: from ID buckets only, unless a condition names its pool explicitly."""

    k: int = Field(0, ge=0)  # exemplars per prompt
    shared: bool = False  # one exemplar set for every item (a cacheable prefix), not one per item
    pool_size: int = Field(200, ge=1)  # generator sources: size of the separate exemplar pool
    separator: str = "\n\n"  # text between exemplars and before the question
    target_delimiter: str = " "  # text between an exemplar's prompt and its answer
    source: SourceSpec | None = None  # exemplar pool source (e.g. a train split); default: task's
    conditions: list[FewShotCondition] = []  # run every condition (one command); default: one


class GenerateOutput(_Spec):
    """Free-form generation."""

    type: Literal["generate"]  # discriminator
    max_tokens: int = Field(32, ge=1)  # most new tokens per answer
    stop: list[str] = ["\n"]  # generation is cut before the first of these


class MultipleChoiceOutput(_Spec):
    """Pick the choice with the highest log-likelihood."""

    type: Literal["multiple_choice"]  # discriminator
    choices: list[str] | None = None  # fixed choices for every item
    choices_field: str | None = None  # or: record field holding the item's list of choices
    choice_prefix: str = " "  # text put before each choice when scoring it

    @model_validator(mode="after")
    def _one_kind(self) -> MultipleChoiceOutput:
        if (self.choices is None) == (self.choices_field is None):
            raise ValueError("give exactly one of 'choices' or 'choices_field'")
        return self


OutputSpec = Annotated[GenerateOutput | MultipleChoiceOutput, Field(discriminator="type")]


class ExtractSpec(_Spec):
    """How the answer is taken from raw generated text."""

    kind: Literal["strip", "first_line", "regex", "last_number", "boxed"] = "strip"  # rule
    pattern: str | None = None  # regex for kind=regex (first group, else whole match)


class ScoringSpec(_Spec):
    """Answer extraction and the per-sample metric."""

    extract: ExtractSpec = ExtractSpec()  # how to get the answer from the output
    # registered metric: exact_match, normalized_match, numeric_match, …
    metric: str = "exact_match"


class GapsSpec(_Spec):
    """Which generalization gaps to report, and their parameters."""

    report: list[GapName] = ["id_ood", "retention", "horizon"]  # gap metrics to compute
    horizon_threshold: float = Field(0.5, gt=0, le=1)  # horizon: fraction of ID accuracy to keep
    bootstrap: int = Field(1000, ge=100)  # bootstrap resamples for gap CIs


class AnalysisSpec(_Spec):
    """A registered task-level analysis (compositionality gap, SGR, CPS, …) and its parameters."""

    name: str  # analysis registry name
    params: dict[str, Any] = {}  # keyword parameters of the analysis


class CardSpec(_Spec):
    """Generalization card: what shifts between ID and OOD, and where."""

    axis: Literal["length", "compositional", "difficulty", "instruction", "other"]  # which axis
    shift: str  # what changes between ID and OOD, in words
    locus: list[Literal["input", "output", "instruction", "exemplars"]] = []  # where the shift is


class TaskSpec(_Spec):
    """A complete, resolved task (after `include:` merging)."""

    name: str  # task name; addressed as "<suite>/<name>" (suite = the folder's suite)
    suites: list[str] = []  # suites this task belongs to
    description: str  # what the task measures, in one or two sentences
    citations: list[str] = []  # papers the task follows
    card: CardSpec | None = None  # generalization card
    source: SourceSpec  # where items come from
    fields: FieldsSpec = FieldsSpec()  # which record fields mean what
    difficulty_name: str = "difficulty"  # human name of the difficulty variable, e.g. "digits"
    buckets: BucketsSpec  # ordered buckets over difficulty
    roles: RolesSpec  # ID vs OOD buckets
    templates: list[TemplateSpec] = Field(min_length=1)  # prompt variants (first is the default)
    default_templates: Literal["first", "all"] = "first"  # which run without --templates
    fewshot: FewShotSpec = FewShotSpec()  # exemplars
    output: OutputSpec  # generation or multiple choice
    scoring: ScoringSpec = ScoringSpec()  # extraction and metric
    gaps: GapsSpec = GapsSpec()  # gap metrics
    analyses: list[AnalysisSpec] = []  # further task-level analyses (see harness.analyses)
    strategies: dict[str, dict[str, Any]] = {}  # per-strategy prompt params (harness.strategies)
    templates_from: TemplatesFromSpec | None = None  # more templates from a paraphrase file

    @model_validator(mode="after")
    def _unique_templates(self) -> TaskSpec:
        ids = [t.id for t in self.templates]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate template ids: {', '.join(dup)}")
        return self
