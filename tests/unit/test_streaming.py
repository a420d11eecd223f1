"""The runner streams a task through the model in chunks: same results, samples written as
they come, and the copies kept for aggregates carry no prompts or outputs."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.config import RunConfig
from harness.lm import OnDone
from harness.requests import GenerateRequest, GenerateResponse
from harness.run.evaluate import evaluate
from harness.testing import ScriptedLM


class CallSizes(ScriptedLM):
    def __init__(self) -> None:
        super().__init__(lambda p: str(len(p) % 7))
        self.sizes: list[int] = []

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        self.sizes.append(len(requests))
        return super().generate(requests, on_done)


def run(tmp_path: Path, name: str, **kw: object) -> tuple[CallSizes, dict[str, object], bytes]:
    cfg = RunConfig(model="scripted:x", tasks=["lengthgen/addition"], limit_per_bucket=5,
                    output_dir=tmp_path / name, **kw)  # type: ignore[arg-type]
    model = CallSizes()
    res = evaluate(cfg, model=model)
    samples = (tmp_path / name / res.tasks[0].samples_file).read_bytes()
    return model, res.tasks[0].model_dump(mode="json"), samples


def test_chunked_run_equals_one_call(tmp_path: Path) -> None:
    whole, res_whole, samples_whole = run(tmp_path, "whole")
    chunked, res_chunked, samples_chunked = run(tmp_path, "chunked", chunk_size=7)
    assert whole.sizes == [55]
    assert chunked.sizes == [7] * 7 + [6]
    assert res_chunked == res_whole and samples_chunked == samples_whole
    assert b'"prompt": "' in samples_whole and samples_whole.count(b"\n") == 55
