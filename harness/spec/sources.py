"""Pydantic models of a task file's ``source``: where its items come from (a seeded generator,
local files, or a Hugging Face dataset), told apart by ``type``."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from harness.spec.base import FrozenSpec as _Spec


class GeneratorSource(_Spec):
    """Items made by a registered, seeded procedural generator."""

    type: Literal["generator"] = Field(description="source kind: a registered generator")
    name: str = Field(
        description="registered generator, e.g. \"addition\" (see `harness generators list`)"
    )
    params: dict[str, Any] = Field({}, description="keyword parameters passed to the generator")
    grid: dict[str, list[Any]] = Field(
        {}, description="a second axis crossed with every bucket: generator param → values; item "
        "j of a bucket gets the j-th combination (cycling), so each cell holds an equal share"
    )
    per_bucket: int = Field(
        100, ge=1, description="items generated per bucket (spread over its values)"
    )
    seed: int = Field(0, description="task-level seed, combined with the run seed")


class FilesSource(_Spec):
    """Items read from local files (one record per line / row)."""

    type: Literal["files"] = Field(description="source kind: local jsonl/csv/tsv files")
    path: str = Field(
        description="file path, relative to the task file; `~` and $VARS are expanded"
    )
    format: Literal["jsonl", "csv", "tsv", "auto"] = Field(
        "auto", description="auto: from the file extension"
    )
    url: str | None = Field(
        None, description="download URL used when `path` is absent (cached; see fetch_file)"
    )
    sha256: str | None = Field(
        None, description="expected sha256 of the downloaded file (checked once)"
    )


class DatasetSource(_Spec):
    """Items from a Hugging Face `datasets` dataset, pinned to a revision."""

    type: Literal["dataset"] = Field(description="source kind: a Hugging Face dataset")
    path: str = Field(description="hub dataset id or local dataset directory")
    config: str | None = Field(None, description="dataset configuration name")
    split: str = Field("test", description="split to evaluate")
    revision: str | None = Field(None, description="hub commit / tag to pin (recommended)")
    local_path: str | None = Field(
        None, description="local mirror used instead of `path` when it exists"
    )


SourceSpec = Annotated[GeneratorSource | FilesSource | DatasetSource, Field(discriminator="type")]
