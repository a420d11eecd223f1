"""A real model stops where its answer is settled (``GenerateRequest.until``): Gemma-3-270M on
``llamacpp:`` and SmolLM2-135M on ``hf:``, asked a few-shot boxed sum without a stop string,
write on past their answer to the budget; asked until the first box closes, each stops there,
with fewer tokens, and the answer both give after ``BoundedLM`` (the run's own wrapping) is the
same text, not cut."""

from __future__ import annotations

import pytest

from harness.answers.extract import answer_end
from harness.models.answer_bounds import BoundedLM
from harness.models.backends import load_model
from harness.requests import GenerateRequest

PROMPT = ("Problem: What is $2+2$?\nSolution: The answer is $\\boxed{4}$.\n\n"
          "Problem: What is $3+5$?\nSolution: The answer is $\\boxed{8}$.\n\n"
          "Problem: What is $7+6$?\nSolution:")
BUDGET = 60


@pytest.mark.slow
@pytest.mark.parametrize(("model", "needs"), [("llamacpp:gemma3-270m", "llama_cpp"),
                                              ("hf:smollm2-135m", "transformers")])
def test_a_real_model_stops_where_the_answer_is_settled(model: str, needs: str) -> None:
    pytest.importorskip(needs)
    lm = load_model(model, {}, 2)
    try:
        [full] = lm.generate([GenerateRequest(PROMPT, BUDGET, ())])
        [early] = lm.generate([GenerateRequest(PROMPT, BUDGET, (), until="first_boxed")])
        end = answer_end(full.text, "first_boxed")
        assert end is not None and full.n_tokens == BUDGET, full  # it writes on to the budget
        assert early.n_tokens < BUDGET // 2 and full.text.startswith(early.text), early
        assert answer_end(early.text, "first_boxed") == end  # it stopped once settled
        bounded = BoundedLM(lm).generate([GenerateRequest(PROMPT, BUDGET, (), until="first_boxed")])
        assert bounded[0].text == full.text[:end] and bounded[0].n_tokens < BUDGET
    finally:
        lm.close()
