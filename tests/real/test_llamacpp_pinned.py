"""`llamacpp:smollm2-135m` keeps its answers: greedy texts, multiple-choice picks and choice
log-probabilities pinned in tests/data/llamacpp_pinned.json, written by the engine before the
choices shared their context (each choice fed its whole context then; commit c7d4013).

Regenerate (only when a change of answers is intended and explained):
``.venv/bin/python tests/real/test_llamacpp_pinned.py --write``.
"""

from __future__ import annotations

import importlib.util
import json
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.requests import GenerateRequest, LoglikelihoodRequest

PINNED = Path(__file__).resolve().parents[1] / "data" / "llamacpp_pinned.json"
# llama.cpp's F16 arithmetic rounds differently with what else shares a batch: a choice's
# log-probability moved by up to 0.027 between the engines (and between batch sizes)
LOGPROB_TOL = 0.05


def _question(a: int, b: int) -> str:
    return f"Question: What is {a} plus {b}?\nAnswer:"


def requests(seed: int = 0) -> tuple[list[LoglikelihoodRequest], list[GenerateRequest]]:
    """4-way multiple choice (0-shot and 3-shot) and greedy generation with shared exemplars."""
    rng = random.Random(seed)
    pairs = [(rng.randint(1, 10 ** d), rng.randint(1, 10 ** d)) for d in (1, 2, 3, 4) * 6]
    shots = "".join(f"{_question(a, b)} {a + b}\n\n" for a, b in pairs[-3:])
    mc = []
    for k, (a, b) in enumerate(pairs[:-3]):
        s = a + b
        context = (shots if k % 2 else "") + _question(a, b)
        mc += [LoglikelihoodRequest(context, f" {c}") for c in sorted({s, s + 1, s + 2, s + 10})]
    gen = [GenerateRequest(shots + _question(a, b), 8, stop=("\n",)) for a, b in pairs[:12]]
    return mc, gen


def answers(batch_size: int = 8) -> dict[str, Any]:
    """The model's answers to :func:`requests`, and for a text that differs from the pinned one
    the log-probabilities of both (a tie within the noise is no change of answer)."""
    from harness.models.llamacpp.backend import LlamaCppModel

    mc, gen = requests()
    lm = LlamaCppModel("smollm2-135m", {"threads": "2"}, batch_size)
    try:
        out: dict[str, Any] = {"logprobs": [r.logprob for r in lm.loglikelihood(mc)],
                               "texts": [r.text for r in lm.generate(gen)]}
        if PINNED.is_file():
            pinned = json.loads(PINNED.read_text(encoding="utf-8"))["texts"]
            out["ties"] = {
                i: [r.logprob for r in lm.loglikelihood(
                    [LoglikelihoodRequest(gen[i].prompt, t) for t in (text, pinned[i])])]
                for i, text in enumerate(out["texts"]) if text != pinned[i]}
        return out
    finally:
        lm.close()


def _picks(logprobs: list[float]) -> list[tuple[int, float]]:
    """Each item's pick and its margin over the runner-up."""
    out = []
    for a in range(0, len(logprobs), 4):
        top = sorted(range(4), key=lambda i: -logprobs[a + i])
        out.append((top[0], logprobs[a + top[0]] - logprobs[a + top[1]]))
    return out


@pytest.mark.slow
@pytest.mark.parametrize("batch_size", [8, 3])
def test_answers_are_pinned(batch_size: int) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.fail("llama-cpp-python is not installed (scripts/setup.sh --tests installs it)")
    want = json.loads(PINNED.read_text(encoding="utf-8"))
    got = answers(batch_size)
    assert got["logprobs"] == pytest.approx(want["logprobs"], abs=LOGPROB_TOL)
    for (pick, _), (pinned, margin) in zip(_picks(got["logprobs"]), _picks(want["logprobs"]),
                                          strict=True):
        assert pick == pinned or margin < 2 * LOGPROB_TOL
    # a text differs only where the model finds the two equally likely (a tie in the noise)
    assert len(got["ties"]) <= 2
    for i, (lp_got, lp_pinned) in got["ties"].items():
        assert abs(lp_got - lp_pinned) < LOGPROB_TOL, (i, got["texts"][i], want["texts"][i])


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    PINNED.unlink(missing_ok=True)
    PINNED.write_text(json.dumps(answers(), indent=1) + "\n", encoding="utf-8")
