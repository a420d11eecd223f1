"""Direct prompting, the default strategy: one model call per item with the task's prompt
(exemplars + question). Unlike the chain strategies it serves every output type: the task's
output type makes the requests (generation: one batched ``generate`` call; multiple choice: one
batched ``loglikelihood`` call over every choice of every item) and scores the responses."""

from __future__ import annotations

from collections.abc import Sequence

from harness.items import Instance
from harness.lm import LM
from harness.outputs import output_type
from harness.scoring.prepared import Prepared
from harness.scoring.records import SampleRecord
from harness.spec.task import TaskSpec
from harness.strategies.registry import strategy


@strategy("direct")
def direct(spec: TaskSpec, task: str, prepared: Sequence[Prepared], pool: Sequence[Instance],
           model: LM) -> list[SampleRecord]:
    """The task's prompt as it is, one batched call for all items, any output type (the default)."""
    del task, pool  # one call per item needs neither
    return output_type(spec).score(spec, prepared, model)
