"""The ``generate`` output type: free-form generation, scored by the task's extraction and metric.

Each item is one ``generate`` call with the task's ``max_tokens`` and ``stop``; the answer is
taken out of the output by ``scoring.extract`` and compared with the target by
``scoring.metric`` (and by each other metric of ``scoring.metrics``: the record's ``scores``).
The target comes from the template or the ``fields.target`` field.
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.answers.budget import stopped_on_budget
from harness.answers.extract import extract, get_extractor
from harness.answers.metrics import checked_metric
from harness.lm import LM
from harness.outputs.base import Oracle, OutputType
from harness.requests import GenerateRequest
from harness.scoring.prepared import Prepared, item_error, record_fields
from harness.scoring.records import ModelCall, SampleRecord
from harness.spec.task import GenerateOutput, TaskSpec


class Generate(OutputType[GenerateOutput]):
    """Free-form generation."""

    spec_model = GenerateOutput
    generates = True

    def score(self, spec: TaskSpec, prepared: Sequence[Prepared],
              model: LM) -> list[SampleRecord]:
        reqs = [self.answer_request(spec, p.prompt, p.max_tokens) for p in prepared]
        resps = model.generate(reqs)
        return [self.score_answer(spec, p, r.text, call(q, r.text, r.n_tokens))
                for p, q, r in zip(prepared, reqs, resps, strict=True)]

    def new_tokens(self, spec: TaskSpec) -> int:
        return self.settings(spec).max_tokens

    def answer_request(self, spec: TaskSpec, prompt: str, max_tokens: int | None = None
                       ) -> GenerateRequest:
        """The request for one answer: the task's stop strings, ``max_tokens`` (the item's
        answer budget, ``answers/budget``; None: the task's own ``max_tokens``), and ``until``
        where the task's extractor says when its answer is settled."""
        out = self.settings(spec)
        kind = spec.scoring.extract.kind
        return GenerateRequest(prompt, max_tokens or out.max_tokens, tuple(out.stop),
                               until=kind if get_extractor(kind).ends else "")

    def score_answer(self, spec: TaskSpec, p: Prepared, text: str,
                     *calls: ModelCall) -> SampleRecord:
        """The record of ``p`` answered with ``text`` (``calls``: the model calls made for it;
        default: one generate call on ``p``'s prompt, its budget unknown)."""
        sc = spec.scoring
        try:
            answer = extract(text, sc.extract)
        except Exception as e:  # a plugin's extractor: the item it failed on is named
            raise item_error(p, f"extractor {sc.extract.kind!r}", e, text) from e
        scores: dict[str, float] = {}
        for name in (sc.metric, *sc.extra_metrics):
            try:
                scores[name] = checked_metric(name)(answer, p.target)
            except Exception as e:
                raise item_error(p, f"metric {name!r}", e, text) from e
        made = list(calls) or [ModelCall(kind="generate", prompt=p.prompt, output=text)]
        return SampleRecord.model_validate(
            {**record_fields(p), "output": text, "extracted": answer,
             "score": scores.pop(sc.metric), "scores": scores, "calls": made,
             "cut": any(c.cut for c in made)})

    def teach(self, spec: TaskSpec, p: Prepared, oracle: Oracle) -> None:
        if oracle.answers.setdefault(p.prompt, p.target) != p.target:
            raise AssertionError(
                f"{p.task}: item {p.item.id} (template {p.template}) has the same prompt as "
                f"another item but a different answer: {p.prompt!r}")


def call(req: GenerateRequest, text: str, n_tokens: int) -> ModelCall:
    """The record of one generate call: its prompt, output, budget and whether it stopped on
    that budget."""
    return ModelCall(kind="generate", prompt=req.prompt, output=text, max_tokens=req.max_tokens,
                     cut=stopped_on_budget(n_tokens, req.max_tokens))


GENERATE = Generate()
