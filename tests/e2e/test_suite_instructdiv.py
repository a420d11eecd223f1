"""The whole instructdiv suite through ``harness eval`` on the tiny fixture model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from harness.analyses.multiprompt import multi_prompt
from harness.run.results import read_samples
from harness.scoring.report import task_reports
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec
from harness.tasks.index import TaskIndex


def test_instructdiv_suite_on_tiny_model(tiny_model_dir: Path, shared_data: Path,
                                         tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", f"hf:{tiny_model_dir}", "--tasks",
         "instructdiv", "--limit-per-bucket", "2", "--seed", "0", "--output-dir", str(out),
         "--batch-size", "16"],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "COLUMNS": "120", "GENHARNESS_DATA": str(shared_data)})
    assert r.returncode == 0, r.stderr
    expected = sorted(ref.address for ref in TaskIndex.build().resolve(["instructdiv"]))
    res = json.loads((out / "results.json").read_text())
    assert sorted(t["task"] for t in res["tasks"]) == expected and len(expected) >= 7
    for t in res["tasks"]:
        assert t["task"] in r.stdout
        spec = TaskSpec.model_validate(t["spec"])
        samples = read_samples(out / t["samples_file"])
        buckets = build_buckets(spec.buckets, spec.roles)
        run_templates = spec.templates if spec.default_templates == "all" else spec.templates[:1]
        assert len(samples) == 2 * len(buckets) * len(run_templates) == t["n_items"] * len(
            run_templates)
        assert {s.template for s in samples} == {tpl.id for tpl in run_templates}
        again = task_reports(samples, buckets, spec.gaps, 0, spec.scoring.metric,
                             extract=spec.scoring.extract)
        assert [a.model_dump(mode="json") for a in again] == t["templates"]
        for s in samples:
            assert s.calls[0].prompt == s.prompt and s.score in (0.0, 1.0)
        if spec.templates_from is None:  # string rewriting: exemplars from seen rule sets only
            assert all(fs.split("/")[0] in {"fs:0-31", "fs:0", "fs:1"} for s in samples
                       for fs in s.fewshot_ids)
            assert all(len(s.fewshot_ids) == spec.fewshot.k == 2 for s in samples)
            continue
        # multi-prompt tasks: official prompts (seen) and the drawn paraphrases (unseen) all ran
        n_para = spec.templates_from.limit
        assert sum(tpl.seen for tpl in spec.templates) == 3 and n_para
        assert len(spec.templates) == 3 + n_para
        (mp,) = t["analyses"]
        assert mp["name"] == "multi_prompt" and mp["n"] == t["n_items"]
        assert mp["details"]["n_templates"] == 3 + n_para
        assert mp["details"]["seen_unseen_gap"]["seen"] == ["official1", "official2", "official3"]
        recomputed = multi_prompt(samples, buckets, dict(spec.analyses[0].params),
                                  _analysis_seed(t["task"]))
        assert recomputed.model_dump(mode="json") == mp
        assert all(s.meta.get("lmentry_id") for s in samples)


def _analysis_seed(task: str) -> int:
    from harness.seeding import derive_seed

    return derive_seed(0, task, "analysis", "multi_prompt")
