"""The base of the task file's pydantic models: frozen, unknown keys rejected."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class FrozenSpec(BaseModel):
    """A frozen model that rejects unknown keys."""

    model_config = ConfigDict(extra="forbid", frozen=True)
