"""The ``horizon:`` key of a task file: how far past its buckets the adaptive horizon search
(``harness eval --horizon``) may go, and its item budget."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field, model_validator

from harness.spec.base import FrozenSpec

WIDEN = 4  # a search still above its midpoint at its end goes on over a range this much wider
WIDENINGS = 3  # ... at most this many times (64 × horizon.max), short of horizon.limit


class HorizonSpec(FrozenSpec):
    """The adaptive search for d50, where accuracy falls halfway to the item baseline."""

    max: int = Field(ge=2, description="largest difficulty the search may try (a generator's "
                     "work budget and the model's context may end it sooner)")
    min: int = Field(1, ge=1, description="smallest difficulty the search may try")
    limit: int | None = Field(
        None, ge=2, exclude_if=lambda v: v is None, description="largest difficulty the task "
        "means or its generator can make: a model still above its midpoint at max is searched "
        f"on past max (each time {WIDEN}× wider, at most {WIDENINGS} times) up to here and "
        "the model's context; default: no limit but the context; = max: never past max")
    max_tokens: int | None = Field(
        None, ge=1, description="most new tokens per answer of a search item (generation; "
        "default output.max_tokens): long items need long answers")
    level: float | None = Field(
        None, gt=0.0, lt=1.0, exclude_if=lambda v: v is None, description="also report where "
        "accuracy is down to this share of the easy-item accuracy (0.85: NoLiMa's effective "
        "length), from the same posterior as d50")
    items: int = Field(200, ge=10, description="answers the search may spend per template and "
                       "exemplar condition (the ID items of the fixed run come on top)")
    round_items: int = Field(40, ge=1, description="answers per round (one batch to the model)")
    precision: float = Field(2.0, gt=1.0, description="stop early once the 95% interval's upper "
                             "limit is at most this multiple of its lower limit")

    @model_validator(mode="after")
    def _ordered(self) -> HorizonSpec:
        if self.min >= self.max:
            raise ValueError(f"horizon.min ({self.min}) must be below horizon.max ({self.max})")
        if self.limit is not None and self.limit < self.max:
            raise ValueError(f"horizon.limit ({self.limit}) must be at least horizon.max "
                             f"({self.max})")
        return self

    def check_task(self, source_type: str, values: Sequence[float] | None,
                   edges: Sequence[float] | None) -> None:
        """The task the search belongs to: a generator source, buckets below ``max``
        (ValueError naming the key otherwise)."""
        if source_type != "generator":
            raise ValueError("horizon: the search makes items at any difficulty, so it needs a "
                             "generator source")
        tops = [v for v in (values or edges or []) if v is not None]
        if tops and self.max <= max(tops) - (0 if values else 1):
            raise ValueError(f"horizon.max ({self.max}) must lie past the largest bucket "
                             f"({max(tops):g})")
