"""Pydantic models of a task file (YAML, validated into ``TaskSpec``; unknown keys are rejected
with a "did you mean" hint). Each field's one-line doc is its ``Field(description=...)``, so the
JSON Schema (``harness/schema/task.schema.json``) and docs/task-files.md carry it with the allowed
values and the default. ``tasks/lengthgen/addition.yaml`` is a complete example.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from harness.spec.base import FrozenSpec as _Spec
from harness.spec.horizon import HorizonSpec
from harness.spec.scoring import AnalysisSpec, GapsSpec, ScoringSpec
from harness.spec.sources import SourceSpec


class FieldsSpec(_Spec):
    """Which record fields carry the target, the difficulty and the item id."""

    target: str = Field(
        "target",
        description="field with the reference answer (MC: index or text of the gold choice)"
    )
    difficulty: str = Field("difficulty", description="numeric field used for bucketing")
    id: str | None = Field(
        None, description="field with a stable item id; default: position in the source"
    )
    meta: list[str] = Field(
        [], description="record fields copied into each sample's `meta` (links, analyses)"
    )
    difficulty_pattern: str | None = Field(
        None, description="regex giving the number in e.g. \"Level 3\" (group 1)"
    )


class BucketsSpec(_Spec):
    """Ordered buckets over the difficulty value: one per value, or half-open ranges."""

    values: list[float] | None = Field(
        None, description="one bucket per listed value, in this order"
    )
    edges: list[float] | None = Field(
        None, description="ascending; bucket i holds edges[i] <= d < edges[i+1]"
    )
    quantiles: int | None = Field(
        None, ge=2, description="N equal-count buckets q1..qN cut from the data"
    )
    allow_outside: bool = Field(False, exclude_if=lambda v: not v, description="data records "
                                "outside every bucket are left out on purpose (validate: no error)")
    allow_empty: bool = Field(False, exclude_if=lambda v: not v, description="a bucket may hold "
                              "no record of the data (validate: no error)")

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


class IdRangeSpec(_Spec):
    """The in-distribution range of the difficulty variable: every integer from min to max."""

    min: int = Field(description="smallest in-distribution difficulty value")
    max: int = Field(description="largest in-distribution difficulty value")
    draw: Literal["every", "uniform"] = Field(
        "every", description="`harness data export --role ID`: every value in turn (equal "
        "counts), or each row's value drawn uniformly at random"
    )

    @model_validator(mode="after")
    def _ordered(self) -> IdRangeSpec:
        if self.max < self.min:
            raise ValueError(f"max ({self.max}) is below min ({self.min})")
        return self


class RolesSpec(_Spec):
    """Which buckets are in-distribution (ID); every other bucket is out-of-distribution (OOD)."""

    id_max: float | None = Field(
        None, description="buckets whose difficulty values are all <= id_max are ID"
    )
    id: list[str | float] | None = Field(
        None, description="explicit ID bucket labels (alternative to id_max)"
    )
    id_range: IdRangeSpec | None = Field(
        None, description="ID is this range of the difficulty (alternative to id_max): buckets "
        "inside it are ID (one partly inside is an error), and `harness data export --role ID` "
        "draws every value in it, not only the ID buckets' values"
    )

    @model_validator(mode="after")
    def _one_kind(self) -> RolesSpec:
        given = [k for k in ("id_max", "id", "id_range") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of 'id_max', 'id' or 'id_range'")
        return self

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # id_range came after results were published: left out while unset, so the resolved
        # spec of every task without it (and its spec_sha256) stays what it was
        data: dict[str, Any] = handler(self)
        if self.id_range is None:
            data.pop("id_range", None)
        return data


class TemplateSpec(_Spec):
    """One named prompt variant (sandboxed Jinja2 over the item's fields)."""

    id: str = Field(description="short name, unique within the task")
    prompt: str = Field(description="Jinja2 template rendering the question")
    target: str | None = Field(
        None, description="Jinja2 template rendering an exemplar's answer; default: the target"
    )
    seen: bool = Field(
        True,
        description="multi-prompt: a \"seen\" (e.g. official) template, or an unseen paraphrase"
    )


class TemplatesFromSpec(_Spec):
    """Templates read from a paraphrase table (see ``harness.tasks.template_sets``)."""

    path: str = Field(
        description="paraphrase CSV (Mizrahi et al. format); `~`/$VARS expanded; "
                    "relative: from the task folder"
    )
    url: str | None = Field(None, description="where users get the file (informational)")
    ids: list[int] | None = Field(
        None, description="paraphrase indices to use; default: every eligible one"
    )
    limit: int | None = Field(
        None, ge=1, description="at most this many eligible paraphrases (seeded draw)"
    )
    sample_seed: int = Field(0, description="seed of the `limit` draw")
    methods: list[str] | None = Field(
        None, description="keep only these generation methods (e.g. rephrase)"
    )
    correct_only: bool = Field(True, description="drop paraphrases manually judged incorrect")
    defaults: Literal["seen", "unseen", "skip"] = Field(
        "skip", description="rows marked as default prompts"
    )
    mode: Literal["append", "replace"] = Field(
        "append", description="add to `templates`, or replace them"
    )
    id_prefix: str = Field("p", description="template id = prefix + paraphrase index")


class FewShotCondition(_Spec):
    """One exemplar condition of a protocol such as Supervision Gap Recovered (easy/hard/none)."""

    id: str = Field(description="condition name recorded in every sample, e.g. \"easy\"")
    k: int | None = Field(None, ge=0, description="exemplars per prompt; default: fewshot.k")
    pool: list[str | float] | None = Field(
        None, description="bucket labels exemplars come from; default: ID buckets"
    )
    evaluate: list[str | float] | None = Field(
        None, description="bucket labels evaluated; default: every bucket"
    )
    matched: bool = Field(
        False, exclude_if=lambda v: not v,
        description="exemplars from the test item's own bucket (the matched-exemplar control: "
        "OOD items with OOD exemplars); not with pool",
    )

    @model_validator(mode="after")
    def _matched_has_no_pool(self) -> FewShotCondition:
        if self.matched and self.pool is not None:
            raise ValueError("a matched condition takes its exemplars from each item's own "
                             "bucket: leave out pool")
        return self


class FewShotSpec(_Spec):
    """Few-shot exemplars: from ID buckets only, unless a condition names its pool explicitly."""

    k: int = Field(0, ge=0, description="exemplars per prompt")
    shared: bool = Field(
        False, description="one exemplar set for every item (a cacheable prefix), not one per item"
    )
    pool_size: int = Field(
        200, ge=1, description="generator sources: size of the separate exemplar pool"
    )
    separator: str = Field("\n\n", description="text between exemplars and before the question")
    target_delimiter: str = Field(
        " ", description="text between an exemplar's prompt and its answer"
    )
    source: SourceSpec | None = Field(
        None, description="exemplar pool source (e.g. a train split); default: task's"
    )
    conditions: list[FewShotCondition] = Field(
        [], description="run every condition (one command); default: one"
    )
    matched_control: bool = Field(
        False, exclude_if=lambda v: not v,
        description="also answer the OOD items with exemplars from their own bucket (condition "
        "`matched`), splitting the ID-OOD gap into difficulty and exemplar shift; as "
        "`harness eval --matched-control`; not with conditions",
    )


class GenerateOutput(_Spec):
    """Free-form generation."""

    handler: ClassVar[str] = "harness.outputs.generate:GENERATE"  # its OutputType

    type: Literal["generate"] = Field(description="output kind: free-form generation")
    max_tokens: int = Field(32, ge=1, description="fewest new tokens an answer may have: the "
                            "budget grows to fit each bucket's longest target in the model's "
                            "own tokens (answers/budget)")
    budget_margin: float = Field(1.25, ge=1.0, le=20.0, exclude_if=lambda v: v == 1.25,
                                 description="an answer may run to this "
                                 "many times its bucket's longest target (room for a model that "
                                 "writes its solution at more length than the reference)")
    stop: list[str] = Field(["\n"], description="generation is cut before the first of these")


class MultipleChoiceOutput(_Spec):
    """Pick the choice with the highest log-likelihood."""

    handler: ClassVar[str] = "harness.outputs.multiple_choice:MULTIPLE_CHOICE"  # its OutputType

    type: Literal["multiple_choice"] = Field(
        description="output kind: the choice with the highest log-likelihood"
    )
    choices: list[str] | None = Field(None, description="fixed choices for every item")
    choices_field: str | None = Field(
        None, description="or: record field holding the item's list of choices"
    )
    choice_prefix: str = Field(" ", description="text put before each choice when scoring it")

    @model_validator(mode="after")
    def _one_kind(self) -> MultipleChoiceOutput:
        if (self.choices is None) == (self.choices_field is None):
            raise ValueError("give exactly one of 'choices' or 'choices_field'")
        return self


# The output types' registration: an output type is a spec model in this union (its keys, and in
# ``handler`` the "module:object" of its ``OutputType``, imported when a task uses it) and that
# module in harness.outputs, which says what the type does (``harness.outputs.OUTPUT_TYPES``).
OutputSpec = Annotated[GenerateOutput | MultipleChoiceOutput, Field(discriminator="type")]


def type_tags(annotation: Any) -> list[str]:
    """The ``type`` tags of a spec model, or of the members of a discriminated union of them
    (``OutputSpec`` gives ``["generate", "multiple_choice"]``), in order."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get("type")
        return [str(t) for t in get_args(field.annotation)] if field is not None else []
    return [tag for member in get_args(annotation) for tag in type_tags(member)]


class CardSpec(_Spec):
    """Generalization card: what shifts between ID and OOD, and where."""

    axis: Literal["length", "compositional", "difficulty", "instruction", "other"] = Field(
        description="which generalization axis the task probes"
    )
    shift: str = Field(description="what changes between ID and OOD, in words")
    locus: list[Literal["input", "output", "instruction", "exemplars"]] = Field(
        [], description="where the shift is"
    )


class TaskSpec(_Spec):
    """A complete, resolved task (after `include:` merging)."""

    name: str = Field(
        description="task name; addressed as \"<suite>/<name>\" (suite = the folder's suite)"
    )
    suites: list[str] = Field([], description="suites this task belongs to")
    description: str = Field(description="what the task measures, in one or two sentences")
    citations: list[str] = Field([], description="papers the task follows")
    card: CardSpec | None = Field(None, description="generalization card")
    source: SourceSpec = Field(description="where items come from")
    fields: FieldsSpec = Field(FieldsSpec(), description="which record fields mean what")
    difficulty_name: str = Field(
        "difficulty", description="human name of the difficulty variable, e.g. \"digits\""
    )
    buckets: BucketsSpec = Field(description="ordered buckets over difficulty")
    roles: RolesSpec = Field(description="ID vs OOD buckets")
    templates: list[TemplateSpec] = Field(
        min_length=1, description="prompt variants (first is the default)"
    )
    default_templates: Literal["first", "all"] = Field(
        "first", description="which run without --templates"
    )
    fewshot: FewShotSpec = Field(FewShotSpec(), description="exemplars")
    output: OutputSpec = Field(description="generation or multiple choice")
    scoring: ScoringSpec = Field(ScoringSpec(), description="extraction and metric")
    gaps: GapsSpec = Field(GapsSpec(), description="gap metrics")
    analyses: list[AnalysisSpec] = Field(
        [], description="further task-level analyses (see harness.analyses)"
    )
    horizon: HorizonSpec | None = Field(
        None, exclude_if=lambda v: v is None,
        description="the adaptive horizon search's range past the buckets (generator sources; "
        "run with --horizon)")
    strategies: dict[str, dict[str, Any]] = Field(
        {}, description="per-strategy prompt params (harness.strategies)"
    )
    templates_from: TemplatesFromSpec | None = Field(
        None, description="more templates from a paraphrase file"
    )
    items_from: str | None = Field(
        None, pattern=r"^[^/\s]+(/[^/\s]+)+$",
        description="address of the task whose items this one evaluates (a variant that "
        "includes it: the same source and buckets give item for item the same items and "
        "exemplars, so harness compare pairs the two); default: its own address",
    )

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # items_from came after results were published: left out while unset (spec_sha256)
        data: dict[str, Any] = handler(self)
        if self.items_from is None:
            data.pop("items_from", None)
        return data

    @model_validator(mode="after")
    def _horizon_past_buckets(self) -> TaskSpec:
        if self.horizon is not None:
            self.horizon.check_task(self.source.type, self.buckets.values, self.buckets.edges)
        return self

    @model_validator(mode="after")
    def _metrics_generate(self) -> TaskSpec:
        if self.scoring.metrics and self.output.type == "multiple_choice":
            raise ValueError("scoring.metrics: a multiple_choice task is scored by its most "
                             "likely choice, not by a metric; several metrics need "
                             "output.type generate")
        return self

    @model_validator(mode="after")
    def _unique_templates(self) -> TaskSpec:
        ids = [t.id for t in self.templates]
        dup = sorted({i for i in ids if ids.count(i) > 1})
        if dup:
            raise ValueError(f"duplicate template ids: {', '.join(dup)}")
        return self
