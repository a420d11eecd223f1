"""Least-to-most prompting (Zhou et al. 2023, "Least-to-Most Prompting Enables Complex Reasoning
in Large Language Models"): first decompose the problem into simpler subproblems, then solve them
in sequence, each solved subproblem joining the context of the next; the original question comes
last, after all solved subproblems.

Stage 1 shows the task's exemplars with their decompositions (record field ``decompose_field``,
a list of strings: SCAN's ``subcommands``) and asks for the item's decomposition (subproblems
separated by ``" ; "``). Stage 2 renders each subproblem with ``sub_prompt`` (Jinja2, variable
``sub``; e.g. ``"IN: {{ sub }}\\nOUT:"`` so it looks like the task's own questions) after the
few-shot exemplars and the subproblems solved so far. Stage 3 asks the original question.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.requests import GenerateRequest
from harness.strategies.base import Chain, StrategyInput, take_params
from harness.strategies.registry import strategy
from harness.templates import render

DEFAULTS = {
    "decompose_field": None,
    "problem_field": None,
    "instruction": "Break each problem into simpler subproblems, in the order they are solved.",
    "sub_prompt": "Q: {{ sub }}\nA:",
    "max_subproblems": 4,
    "decompose_tokens": 48,
}


def decomposition_prompt(inp: StrategyInput, instruction: str, field: str | None,
                         problem_field: str | None = None) -> str:
    """Stage 1: the instruction, exemplar decompositions (when the field exists), the item.
    Problems are shown as the record field ``problem_field`` (default: the rendered question)."""
    def problem(rec: Mapping[str, Any], question: str) -> str:
        return str(rec[problem_field]) if problem_field and problem_field in rec else question

    blocks = [instruction]
    for ex, q in zip(inp.exemplars, inp.exemplar_questions, strict=True):
        parts = ex.record.get(field) if field else None
        if isinstance(parts, list) and parts:
            blocks.append(f"Problem: {problem(ex.record, q)}\n"
                          f"Subproblems: {' ; '.join(str(s) for s in parts)}")
    blocks.append(f"Problem: {problem(inp.prepared.item.record, inp.question)}\nSubproblems:")
    return "\n\n".join(blocks)


@strategy("least_to_most")
def least_to_most(inp: StrategyInput) -> Chain:
    """Decompose, solve each subproblem in order, then answer the question."""
    p = take_params(inp, "least_to_most", DEFAULTS)
    field = p["decompose_field"]
    prompt = decomposition_prompt(inp, str(p["instruction"]), field, p["problem_field"])
    text = yield GenerateRequest(prompt, int(p["decompose_tokens"]), ("\n",))
    subs = [s.strip() for s in text.split(";") if s.strip()][: int(p["max_subproblems"])]
    fs = inp.spec.fewshot
    solved = ""
    for sub in subs:
        sub_q = render(str(p["sub_prompt"]), {"sub": sub})
        answer = yield inp.answer_request(inp.context + solved + sub_q)
        solved += sub_q + fs.target_delimiter + answer.strip() + fs.separator
    final = yield inp.answer_request(inp.context + solved + inp.question)
    return final
