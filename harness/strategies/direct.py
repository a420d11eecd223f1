"""Direct prompting: one call with the task's prompt (exemplars + question)."""

from __future__ import annotations

from harness.strategies.base import Chain, StrategyInput, take_params


def direct(inp: StrategyInput) -> Chain:
    """Ask once; the answer is the generated text."""
    take_params(inp, "direct", {})
    answer = yield inp.answer_request(inp.prepared.prompt)
    return answer
