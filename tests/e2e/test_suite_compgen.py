"""The compgen suite end to end on the tiny random Llama: every task runs, results are
recomputable from the samples, and the multi-call strategies log each of their calls."""

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

TASKS = ["kb_two_hop", "pcfgset_productivity", "pcfgset_systematicity", "scan_addprim_jump",
         "scan_addprim_turn_left", "scan_length", "scan_simple"]


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True, text=True,
                          env={**os.environ, "COLUMNS": "120"}, timeout=600)


def test_compgen_suite_on_tiny_model(tiny_model_dir: Path, shared_data: Path,
                                     tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = harness("eval", "--model", f"hf:{tiny_model_dir}", "--tasks", "compgen",
                "--limit-per-bucket", "1", "--output-dir", str(out), "--batch-size", "16")
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert [t["task"] for t in res["tasks"]] == [f"compgen/{t}" for t in TASKS]
    for t in res["tasks"]:
        spec = TaskSpec.model_validate(t["spec"])
        assert spec.card is not None and spec.citations and spec.description
        samples = read_samples(out / t["samples_file"])
        assert samples and all(len(s.calls) == 1 and s.calls[0].prompt == s.prompt for s in samples)
        again = task_reports(samples, build_buckets(spec.buckets, spec.roles), spec.gaps, 0,
                             spec.scoring.metric, extract=spec.scoring.extract)
        assert [a.model_dump(mode="json") for a in again] == t["templates"]
    kb = res["tasks"][0]
    assert [tpl["template"] for tpl in kb["templates"]] == ["two_hop", "hop1", "hop2"]
    (cg,) = kb["analyses"]
    assert cg["name"] == "compositionality_gap" and cg["details"]["items"] == 2


def test_multi_call_strategies_on_tiny_model(tiny_model_dir: Path, shared_data: Path,
                                             tmp_path: Path) -> None:
    for strategy, task, least_calls in [("least_to_most", "compgen/scan_addprim_jump", 2),
                                        ("self_ask", "compgen/kb_two_hop", 3),
                                        ("cot", "compgen/pcfgset_systematicity", 2)]:
        out = tmp_path / strategy
        r = harness("eval", "--model", f"hf:{tiny_model_dir}", "--tasks", task,
                    "--limit-per-bucket", "1", "--output-dir", str(out), "--strategy", strategy,
                    "--templates", "two_hop" if strategy == "self_ask" else "io")
        assert r.returncode == 0, r.stderr
        res = json.loads((out / "results.json").read_text())
        assert res["run"]["strategy"] == strategy
        for s in read_samples(out / res["tasks"][0]["samples_file"]):
            assert len(s.calls) >= least_calls and all(c.output is not None for c in s.calls)
            assert s.calls[-1].output == s.output


def test_unknown_strategy_is_one_line(tmp_path: Path) -> None:
    r = harness("eval", "--model", "hf:x", "--tasks", "compgen/scan_length", "--strategy",
                "least-to-most", "--output-dir", str(tmp_path))
    assert r.returncode == 2 and "did you mean: least_to_most" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
