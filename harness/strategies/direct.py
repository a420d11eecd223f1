"""Direct prompting, the default strategy: one model call per item with the task's prompt
(exemplars + question). Unlike the chain strategies it serves both output types: generation
tasks get one batched ``generate`` call, multiple-choice tasks one batched ``loglikelihood``
call over every choice of every item."""

from __future__ import annotations

from collections.abc import Sequence

from harness.models.base import LM
from harness.requests import GenerateRequest, LoglikelihoodRequest
from harness.scoring.records import SampleRecord
from harness.scoring.score import Prepared, score_choices, score_generation
from harness.tasks.instances import Instance
from harness.tasks.spec import GenerateOutput, MultipleChoiceOutput, TaskSpec


def direct(spec: TaskSpec, task: str, prepared: Sequence[Prepared], pool: Sequence[Instance],
           model: LM) -> list[SampleRecord]:
    """Send every request of ``prepared`` to the model in one call and score the responses."""
    del task, pool  # one call per item needs neither
    out = spec.output
    if isinstance(out, GenerateOutput):
        reqs = [GenerateRequest(p.prompt, out.max_tokens, tuple(out.stop)) for p in prepared]
        resps = model.generate(reqs)
        return [score_generation(spec, p, r.text) for p, r in zip(prepared, resps, strict=True)]
    assert isinstance(out, MultipleChoiceOutput)
    conts = [[out.choice_prefix + c for c in (p.choices or [])] for p in prepared]
    ll_reqs = [LoglikelihoodRequest(p.prompt, c) for p, cs in zip(prepared, conts, strict=True)
               for c in cs]
    ll = model.loglikelihood(ll_reqs)
    records, pos = [], 0
    for p, cs in zip(prepared, conts, strict=True):
        lps = [r.logprob for r in ll[pos : pos + len(cs)]]
        pos += len(cs)
        records.append(score_choices(spec, p, cs, lps))
    return records
