"""The frozen pydantic base of leaderboard.json's models, and its field helpers (fields left out
of the file while empty, so a board without them keeps its bytes)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def _optional() -> Any:
    """A field that is None by default and left out of leaderboard.json while None."""
    return Field(None, exclude_if=lambda value: value is None)


def _listed() -> Any:
    """A list field that is empty by default and left out of leaderboard.json while empty."""
    return Field(default_factory=list, exclude_if=lambda value: not value)


def _sparse() -> Any:
    """A mapping field that is empty by default and left out of leaderboard.json while empty (a
    board without registered gaps beyond the built-in three keeps its bytes)."""
    return Field(default_factory=dict, exclude_if=lambda value: not value)
