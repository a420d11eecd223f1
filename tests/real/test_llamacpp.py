"""``harness eval --model llamacpp:smollm2-135m`` end to end: the shipped GGUF converted to F16
once into the model cache, run by llama.cpp, with the answers of ``hf:smollm2-135m``.

Needs llama-cpp-python (``scripts/setup.sh --tests`` compiles it); the backend's logic is tested
fast on a tiny GGUF in tests/unit/test_llamacpp_backend.py.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

TASKS = "lengthgen/addition,instructdiv/more_letters"


def _eval(model: str, out: Path) -> dict[str, object]:
    env = {**os.environ, "COLUMNS": "120"}
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", model, "--tasks", TASKS,
         "--limit-per-bucket", "2", "--seed", "0", "--no-cache", "--output-dir", str(out),
         *(["--model-args", "threads=1"] if model.startswith("llamacpp:") else [])],
        capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, r.stderr
    assert "ID" in r.stdout  # the tables were printed
    return json.loads((out / "results.json").read_text())  # type: ignore[no-any-return]


def _outputs(run: Path) -> dict[tuple[str, str], tuple[str | None, list[float] | None]]:
    res = json.loads((run / "results.json").read_text())
    got = {}
    for t in res["tasks"]:
        for line in (run / t["samples_file"]).read_text().splitlines():
            s = json.loads(line)
            got[(s["task"], s["id"])] = (s["output"], s["choice_logprobs"])
    return got


@pytest.mark.slow
def test_eval_llamacpp_smollm2_keeps_hf_answers(tmp_path: Path, shared_data: Path) -> None:
    if importlib.util.find_spec("llama_cpp") is None:
        why = "needs llama-cpp-python (bash scripts/setup.sh --tests)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    res = _eval("llamacpp:smollm2-135m", tmp_path / "llamacpp")
    model = res["model"]
    assert isinstance(model, dict)
    assert (model["backend"], model["name"], model["dtype"]) == ("llamacpp", "smollm2-135m", "F16")
    assert str(model["path"]).endswith(".F16.gguf") and "site-packages" not in str(model["path"])
    assert model["weights_sha256"] and len(str(model["weights_sha256"])) == 64
    _eval("hf:smollm2-135m", tmp_path / "hf")
    a, b = _outputs(tmp_path / "llamacpp"), _outputs(tmp_path / "hf")
    assert a.keys() == b.keys() and len(a) > 20
    gen = [k for k in a if a[k][1] is None]
    mc = [k for k in a if a[k][1] is not None]
    assert gen and mc
    # F16 weights keep the greedy answers (bench/RESULTS.md: agreement with hf:)
    assert sum(a[k][0] == b[k][0] for k in gen) >= 0.9 * len(gen)
    for k in mc:
        la, lb = a[k][1], b[k][1]
        assert la is not None and lb is not None
        assert max(abs(x - y) for x, y in zip(la, lb, strict=True)) < 0.1
