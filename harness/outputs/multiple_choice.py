"""The ``multiple_choice`` output type: the choice with the highest log-likelihood is the answer.

An item's choices are fixed (``output.choices``) or a list in a record field
(``output.choices_field``); its ``fields.target`` field holds the gold choice's index or text,
and the gold choice is the target. Every choice of every item is scored in one batched
``loglikelihood`` call (each choice after ``choice_prefix``); the item is correct when the gold
choice scores highest (ties go to the lowest index).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.errors import HarnessError
from harness.items import Instance
from harness.lm import LM
from harness.outputs.base import Oracle, OutputType
from harness.requests import LoglikelihoodRequest
from harness.scoring.prepared import Prepared, record_fields
from harness.scoring.records import ModelCall, SampleRecord
from harness.spec.task import MultipleChoiceOutput, TaskSpec


class MultipleChoice(OutputType[MultipleChoiceOutput]):
    """Pick the choice with the highest log-likelihood."""

    spec_model = MultipleChoiceOutput

    def choices(self, spec: TaskSpec, item: Instance) -> list[str]:
        out = self.settings(spec)
        if out.choices is not None:
            return list(out.choices)
        assert out.choices_field is not None
        value = item.record.get(out.choices_field)
        if not isinstance(value, list) or not value:
            raise HarnessError(
                f"item {item.id}: output.choices_field {out.choices_field!r} is not a list"
            )
        return [str(c) for c in value]

    def gold(self, spec: TaskSpec, item: Instance) -> int:
        """The target field holds the gold choice's index or its text."""
        choices = self.choices(spec, item)
        raw = item.record.get(spec.fields.target)
        if isinstance(raw, int) and 0 <= raw < len(choices):
            return raw
        if str(raw) in choices:
            return choices.index(str(raw))
        raise HarnessError(f"item {item.id}: target {raw!r} is neither a choice index nor a choice")

    def target(self, spec: TaskSpec, item: Instance) -> str:
        return self.choices(spec, item)[self.gold(spec, item)]

    def fields_read(self, spec: TaskSpec) -> dict[str, str]:
        out = self.settings(spec)
        field = {} if out.choices_field is None else {"output.choices_field": out.choices_field}
        return {**field, "fields.target": spec.fields.target}

    def continuations(self, spec: TaskSpec, p: Prepared) -> list[str]:
        """What is scored after ``p``'s prompt: each choice after the choice prefix."""
        prefix = self.settings(spec).choice_prefix
        return [prefix + c for c in p.choices or []]

    def score(self, spec: TaskSpec, prepared: Sequence[Prepared],
              model: LM) -> list[SampleRecord]:
        conts = [self.continuations(spec, p) for p in prepared]
        ll = model.loglikelihood([LoglikelihoodRequest(p.prompt, c)
                                  for p, cs in zip(prepared, conts, strict=True) for c in cs])
        records, pos = [], 0
        for p, cs in zip(prepared, conts, strict=True):
            records.append(self._record(p, [r.logprob for r in ll[pos : pos + len(cs)]]))
            pos += len(cs)
        return records

    def _record(self, p: Prepared, logprobs: Sequence[float]) -> SampleRecord:
        assert p.choices is not None and p.gold is not None
        best = max(range(len(logprobs)), key=lambda i: (logprobs[i], -i))
        call = ModelCall(kind="loglikelihood", prompt=p.prompt, logprobs=list(logprobs))
        return SampleRecord.model_validate({
            **record_fields(p), "output": p.choices[best], "extracted": p.choices[best],
            "score": 1.0 if best == p.gold else 0.0, "choices": p.choices,
            "choice_logprobs": list(logprobs), "gold_index": p.gold, "calls": [call],
        })

    def teach(self, spec: TaskSpec, p: Prepared, oracle: Oracle) -> None:
        for i, c in enumerate(self.continuations(spec, p)):
            oracle.scores[(p.prompt, c)] = 0.0 if i == p.gold else -1.0


MULTIPLE_CHOICE = MultipleChoice()
