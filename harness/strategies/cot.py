"""Chain of thought, two-stage (Kojima et al. 2022, "Large Language Models are Zero-Shot
Reasoners"): the prompt plus a reasoning trigger, then an answer trigger after the reasoning.

Params (``strategies: {cot: {...}}``): ``trigger``, ``answer_trigger``, ``reasoning_tokens``.
"""

from __future__ import annotations

from harness.requests import GenerateRequest
from harness.strategies.base import Chain, StrategyInput, take_params
from harness.strategies.registry import strategy

DEFAULTS = {
    "trigger": " Let's think step by step.",
    "answer_trigger": "\nTherefore, the answer is",
    "reasoning_tokens": 96,
}


@strategy("cot")
def cot(inp: StrategyInput) -> Chain:
    """Reason (stopping at a blank line), then answer in the task's format."""
    p = take_params(inp, "cot", DEFAULTS)
    first = inp.prepared.prompt + str(p["trigger"])
    reasoning = yield GenerateRequest(first, int(p["reasoning_tokens"]), ("\n\n",))
    answer = yield inp.answer_request(first + reasoning + str(p["answer_trigger"]))
    return answer
