"""What an output type is: the one object that knows how a task's answers are given and scored.

A task's ``output:`` block is a spec model (a member of ``OutputSpec`` in ``harness.spec.task``,
selected by its ``type``); its ``OutputType`` here says what that means for a run:

- an item's answer: its choices, the index of the gold one, and a target text the type fixes
  (``choices``, ``gold``, ``target``), and the record fields it reads (``fields_read``, checked
  against a generator's fields when the task file loads);
- the run: the requests of prepared items, sent to the model, and the responses scored into
  sample records (``score``); types whose answers are generated text (``generates``) also give
  one request at a time and score one answer text, which chain strategies need
  (``answer_request``, ``score_answer``);
- the oracle of ``harness.testing``: what a model that knows every answer replies (``teach``).

An output type calls the model through the LM contract (``harness.lm.LM``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Generic, TypeVar

from pydantic import BaseModel

from harness.errors import HarnessError
from harness.items import Instance
from harness.lm import LM
from harness.requests import GenerateRequest
from harness.scoring.prepared import Prepared
from harness.scoring.records import ModelCall, SampleRecord
from harness.spec.task import TaskSpec, type_tags

S = TypeVar("S", bound=BaseModel)


@dataclass(frozen=True)
class Oracle:
    """What a model that knows every reference answer replies (``harness.testing.oracle_model``)."""

    answers: dict[str, str] = field(default_factory=dict)  # prompt -> generated text
    scores: dict[tuple[str, str], float] = field(
        default_factory=dict)  # (context, continuation) -> log-likelihood


class OutputType(ABC, Generic[S]):
    """One output type; ``spec_model`` is its spec model, whose ``type`` tag names it (the
    ``model`` argument of the methods is the LM the run calls)."""

    spec_model: type[S]  # the spec model (a member of ``OutputSpec``)
    generates: ClassVar[bool] = False  # answers are generated text (chain strategies can run)

    @property
    def name(self) -> str:
        """The ``output.type`` tag of the spec model."""
        return type_tags(self.spec_model)[0]

    def settings(self, spec: TaskSpec) -> S:
        """The task's ``output`` block, as this type's spec model."""
        out = spec.output
        if not isinstance(out, self.spec_model):
            raise TypeError(f"task {spec.name}: output type {out.type!r}, not {self.name!r}")
        return out

    # --- an item's answer -----------------------------------------------------------------

    def choices(self, spec: TaskSpec, item: Instance) -> list[str] | None:
        """The item's answer choices; None when the type has none."""
        return None

    def gold(self, spec: TaskSpec, item: Instance) -> int | None:
        """Index of the item's correct choice; None when the type has no choices."""
        return None

    def target(self, spec: TaskSpec, item: Instance) -> str | None:
        """The reference answer text when the type fixes it (e.g. the gold choice); None: the
        template's ``target`` or the ``fields.target`` field (``harness.outputs.prompts``)."""
        return None

    def fields_read(self, spec: TaskSpec) -> dict[str, str]:
        """Record fields the type reads from every item, by the task-file key naming each."""
        return {}

    # --- a run ----------------------------------------------------------------------------

    def new_tokens(self, spec: TaskSpec) -> int:
        """The most tokens the model may generate for one item (0: none; for time estimates)."""
        return 0

    @abstractmethod
    def score(self, spec: TaskSpec, prepared: Sequence[Prepared],
              model: LM) -> list[SampleRecord]:
        """Send the requests of ``prepared`` to ``model`` in one batched call and score the
        responses: one record per item, in order, each with its model call."""

    def answer_request(self, spec: TaskSpec, prompt: str, max_tokens: int | None = None
                       ) -> GenerateRequest:
        """A request for an answer to ``prompt`` in the task's own format (``generates``;
        ``max_tokens``: the item's answer budget, None for the task's)."""
        raise HarnessError(f"output type {self.name!r}: answers are not generated text")

    def score_answer(self, spec: TaskSpec, p: Prepared, text: str,
                     *calls: ModelCall) -> SampleRecord:
        """Score the generated answer ``text`` of ``p`` (``generates``; ``calls``: the model
        calls made for it)."""
        raise HarnessError(f"output type {self.name!r}: answers are not generated text")

    # --- testing --------------------------------------------------------------------------

    @abstractmethod
    def teach(self, spec: TaskSpec, p: Prepared, oracle: Oracle) -> None:
        """Make ``oracle`` answer ``p`` correctly."""
