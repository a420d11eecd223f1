"""Everything a run can vary, in one place."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

# options that do not change a run's numbers: a rerun differing only in these resumes
RUN_SPECIFIC = ("output_dir", "use_cache", "cache_dir", "data_parallel", "batch_size",
                "chunk_size", "replay")
# options that choose which items run, not how they run: a leaderboard entry (one model under
# one configuration) merges runs that differ only in these
# (the matched-exemplar control adds answers and leaves the others as they are)
ITEM_SELECTION = ("tasks", "limit_per_bucket", "include_paths", "matched_control", "horizon",
                  "horizon_items")


class RunConfig(BaseModel):
    """Options of one ``harness eval`` run (recorded in results.json)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str  # model spec, e.g. "hf:smollm2-135m"
    model_args: dict[str, str] = {}  # backend arguments (--model-args)
    tasks: list[str]  # task / suite names as given
    seed: int = 0  # run seed: items, few-shot draws and bootstrap streams derive from it
    limit_per_bucket: int | None = Field(None, ge=1)  # cap on items per bucket
    templates: list[str] | None = None  # template ids to run; None = each task's first; ["all"]
    num_fewshot: int | None = Field(None, ge=0)  # overrides each task's fewshot.k
    fewshot_shared: bool | None = None  # overrides each task's fewshot.shared (one exemplar set)
    matched_control: bool = False  # also answer OOD items with exemplars from their own bucket
    horizon: bool = Field(  # also run the adaptive horizon search of tasks that declare one
        False, exclude_if=lambda v: not v)
    horizon_items: int | None = Field(  # its answers per template and condition (the spec's)
        None, ge=10, exclude_if=lambda v: v is None)
    max_answer_tokens: int | None = Field(  # caps every answer budget (answers/budget): a
        None, ge=1, exclude_if=lambda v: v is None)  # quick look on a slow machine; cuts show
    replay: list[Path] = Field(  # earlier runs whose answers are reused (not in results.json)
        [], exclude=True)
    apply_chat_template: bool = False  # format prompts with the tokenizer's chat template
    batch_size: int | Literal["auto"] = "auto"  # model batch size
    output_dir: Path  # where results.json and samples/ go
    include_paths: list[Path] = []  # extra task folders
    strategy: str = "direct"  # prompting strategy: direct, cot, least_to_most, self_ask
    use_cache: bool = True  # answer finished requests from the response cache, store new ones
    cache_dir: Path | None = None  # response cache; None: $GENHARNESS_RESPONSE_CACHE or the default
    chunk_size: int = Field(8192, ge=1)  # prompts per model call; samples are written per chunk
    data_parallel: int = Field(1, ge=1)  # model replicas in separate processes sharing the requests
