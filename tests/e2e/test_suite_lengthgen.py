"""The whole lengthgen suite through ``harness eval`` on the tiny fixture model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.run.results import read_samples
from harness.scoring.report import task_reports
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex


def test_lengthgen_suite_on_tiny_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", f"hf:{tiny_model_dir}", "--tasks",
         "lengthgen", "--limit-per-bucket", "2", "--seed", "0", "--output-dir", str(out),
         "--batch-size", "16"],
        capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    expected = sorted(ref.address for ref in TaskIndex.build().resolve(["lengthgen"]))
    res = json.loads((out / "results.json").read_text())
    assert sorted(t["task"] for t in res["tasks"]) == expected and len(expected) >= 12
    for t in res["tasks"]:
        assert t["task"] in r.stdout
        spec = TaskSpec.model_validate(t["spec"])
        samples = read_samples(out / t["samples_file"])
        buckets = build_buckets(spec.buckets, spec.roles)
        assert len(samples) == t["n_items"] == 2 * len(buckets)  # first template only
        assert {s.bucket for s in samples} == {b.label for b in buckets}
        again = task_reports(samples, buckets, spec.gaps, 0, spec.scoring.metric,
                             extract=spec.scoring.extract)
        assert [a.model_dump(mode="json") for a in again] == t["templates"]
        for s in samples:
            assert s.calls[0].prompt == s.prompt and s.score in (0.0, 1.0)
    passkey = next(t for t in res["tasks"] if t["task"] == "lengthgen/passkey")
    (eff,) = passkey["analyses"]
    assert eff["name"] == "effective_length" and eff["details"]["threshold"] == 0.856
    assert [row["length"] for row in eff["details"]["per_length"]] == [128, 256, 512, 1024]
    # context lengths are counted with the tiny model's own tokenizer
    from transformers import AutoTokenizer

    from harness.generators.passkey import FILLER

    tok = AutoTokenizer.from_pretrained(str(tiny_model_dir))
    slack = max(len(tok(" " + f, add_special_tokens=False)["input_ids"]) for f in FILLER)
    for s in read_samples(out / passkey["samples_file"]):
        n = len(tok(s.prompt, add_special_tokens=False)["input_ids"])
        # (the tiny byte-level tokenizer needs ~155 tokens for instruction, needle and question,
        # so its 128-token items hold the needle alone)
        assert s.difficulty - slack <= n <= max(s.difficulty, 160), (s.difficulty, n)
        assert s.meta["prompt_tokens"] == n
