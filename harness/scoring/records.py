"""The per-sample record: one line of ``samples/<task>.jsonl``.

Every aggregate in results.json is recomputable from these records alone
(see ``harness.scoring.report.task_reports``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from harness.spec.buckets import Role


class ModelCall(BaseModel):
    """One model call made for a sample (a sample may need several, e.g. multi-step prompting)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: str  # "generate" or "loglikelihood"
    prompt: str  # exact text sent to the model
    output: str | None = None  # generated text (generate)
    logprobs: list[float] | None = None  # one per continuation (loglikelihood)
    max_tokens: int | None = Field(  # generate: the answer budget the request allowed
        None, exclude_if=lambda v: v is None)
    cut: bool = Field(False, exclude_if=lambda v: not v)  # generate: stopped on that budget


class SampleRecord(BaseModel):
    """Everything about one scored item under one prompt template."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    task: str  # task address, e.g. "lengthgen/addition"
    id: str  # item id, stable across runs with the same seed
    template: str  # prompt template id
    condition: str = ""  # few-shot condition id ("" when the task declares none)
    fewshot_ids: list[str]  # ids of the exemplar items, in prompt order
    difficulty: float  # the item's difficulty value
    bucket: str  # bucket label
    bucket_index: int  # bucket position on the difficulty axis
    role: Role  # "ID" or "OOD"
    prompt: str  # the exact prompt the model saw (after few-shot and chat formatting)
    target: str  # reference answer (MC: the gold choice text)
    output: str  # raw model output (MC: the chosen choice text)
    extracted: str  # answer after extraction (MC: the chosen choice text)
    score: float  # 1.0 correct, 0.0 wrong (fractional for partial-credit metrics)
    scores: dict[str, float] = Field(  # the other metrics of scoring.metrics (after the
        default_factory=dict, exclude_if=lambda v: not v)  # primary's, `score`) by name
    choices: list[str] | None = None  # MC: the choices, in order
    choice_logprobs: list[float] | None = None  # MC: log-likelihood of each choice
    gold_index: int | None = None  # MC: index of the correct choice
    calls: list[ModelCall] = []  # model calls made for this sample, in order
    cut: bool = Field(False, exclude_if=lambda v: not v)  # a call stopped on its answer budget
    # (answers/budget): the answer may have been cut short
    context_bound: bool = Field(False, exclude_if=lambda v: not v)  # that budget was what the
    # model's context left after the prompt: a cut answer ran out of context, not budget
    meta: dict[str, Any] = {}  # record fields named in the spec's fields.meta
