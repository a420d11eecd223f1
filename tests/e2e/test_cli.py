"""The ``harness`` command as a user runs it: a real (tiny) HF model, and every bad-input path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run.results import read_samples
from harness.scoring.report import task_reports
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec


def harness(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "120"}
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=600)


def test_eval_on_tiny_hf_model(tiny_model_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "demo"
    tasks = "lengthgen/addition,lengthgen/copy,lengthgen/reverse"
    r = harness("eval", "--model", f"hf:{tiny_model_dir}", "--tasks", tasks,
                "--limit-per-bucket", "2", "--seed", "0", "--output-dir", str(out),
                "--batch-size", "8")
    assert r.returncode == 0, r.stderr
    for title in ("lengthgen/addition", "lengthgen/copy", "lengthgen/reverse"):
        assert title in r.stdout
    # the untrained tiny model is at 0% in distribution: a floor, never a gap of 0
    assert "gaps: floor — not measurable (ID accuracy 0.0%" in r.stdout
    assert "ID−OOD gap" not in r.stdout and "extrapolation horizon" not in r.stdout
    res = json.loads((out / "results.json").read_text())
    assert res["schema_version"] == 3 and res["model"]["backend"] == "hf"
    assert res["model"]["weights_sha256"] and res["model"]["dtype"]
    assert res["environment"]["libraries"]["transformers"]
    assert [t["task"] for t in res["tasks"]] == ["lengthgen/addition", "lengthgen/copy",
                                                 "lengthgen/reverse"]
    for t in res["tasks"]:
        samples = read_samples(out / t["samples_file"])
        assert len(samples) == t["n_items"]
        assert all(s.calls and s.calls[0].prompt == s.prompt for s in samples)
        spec = TaskSpec.model_validate(t["spec"])
        again = task_reports(samples, build_buckets(spec.buckets, spec.roles), spec.gaps, 0,
                             spec.scoring.metric, extract=spec.scoring.extract)
        assert [a.model_dump(mode="json") for a in again] == t["templates"]


def test_tasks_commands(tmp_path: Path) -> None:
    r = harness("tasks", "list")
    assert r.returncode == 0 and "lengthgen/addition" in r.stdout
    r = harness("tasks", "show", "lengthgen/addition")
    assert r.returncode == 0 and "id_max: 5," in r.stdout and "OOD" in r.stdout
    r = harness("tasks", "sample", "lengthgen/addition", "-n", "3", "--bucket", "7")
    assert r.returncode == 0 and r.stdout.count("bucket=7 role=OOD") == 3
    prompts = [blk for blk in r.stdout.split("--- ")[1:]]
    for blk in prompts:  # the question has 7-digit operands; every exemplar is ID (<= 5 digits)
        lines = [ln for ln in blk.splitlines() if " + " in ln]
        *shots, question = lines
        assert len(question.split(" + ")[0]) == 7
        assert all(len(s.split(" + ")[0]) <= 5 for s in shots) and len(shots) == 3


BAD_CASES = [
    (
        ["eval", "--model", "hf:x", "--tasks", "lengthgn"],
        "unknown task or suite 'lengthgn' (did you mean: lengthgen",
    ),
    (
        ["eval", "--model", "hf:x", "--tasks", "lengthgen", "--limit-per-bucket", "0"],
        "--limit-per-bucket",
    ),
    (
        ["eval", "--model", "hf:x", "--tasks", "lengthgen", "--limit-per-bucket", "-3"],
        "--limit-per-bucket",
    ),
    (
        [
            "eval", "--model", "hf:/no/such/model/dir", "--tasks", "lengthgen/copy",
            "--limit-per-bucket", "1",
        ],
        "/no/such/model/dir",
    ),
    (["eval", "--model", "nosuch:x", "--tasks", "lengthgen"], "nosuch"),
    # issue 26: run arguments are checked against the tasks before the model loads (this model
    # does not exist: the error would name it if the model came first)
    (["eval", "--model", "hf:/no/such/model/dir", "--tasks", "lengthgen/copy", "--templates",
      "nosuch"], "--templates: task lengthgen/copy has no template 'nosuch'"),
    (["eval", "--model", "hf:/no/such/model/dir", "--tasks", "instructdiv/homophones",
      "--strategy", "cot"], "--strategy cot: task instructdiv/homophones is multiple choice"),
    (["eval", "--model", "hf:/no/such/model/dir", "--tasks", "lengthgen/copy", "--num-fewshot",
      "100000"], "--num-fewshot 100000: lengthgen/copy: fewshot.k: k=100000 but the exemplar "
                 "pool holds"),
    (["eval", "--model", "hf:x", "--tasks", "lengthgen", "--model-args", "dtype"], "--model-args"),
    (["eval", "--model", "hf:x", "--tasks", "lengthgen", "--batch-size", "zero"], "--batch-size"),
    (["tasks", "show", "additon"], "did you mean"),
    (["tasks", "sample", "lengthgen/addition", "--bucket", "9"], "--bucket"),
]


@pytest.mark.parametrize("args,needle", BAD_CASES)
def test_bad_input_is_one_line(args: list[str], needle: str, tmp_path: Path) -> None:
    r = harness(*args, "--output-dir", str(tmp_path)) if args[0] == "eval" else harness(*args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0], r.stderr


def test_invalid_task_files(tmp_path: Path) -> None:
    d = tmp_path / "mine"
    d.mkdir()
    (d / "broken.yaml").write_text("name: broken\ndescription: [unclosed\n")
    (d / "typo.yaml").write_text(
        "name: typo\ndescription: d\nsource: {type: generator, name: copy}\n"
        "buckets: {values: [1, 2]}\nroles: {id_max: 1}\ntemplates: [{id: a, prompt: x}]\n"
        "output: {type: generate, max_tokns: 5}\n")
    r = harness("tasks", "validate", str(d / "broken.yaml"), str(d / "typo.yaml"))
    assert r.returncode == 2
    err = r.stderr.splitlines()
    assert err[0].startswith(f"error: {d / 'broken.yaml'}:") and "malformed YAML" in err[0]
    assert (
        f"{d / 'typo.yaml'}:7: output.max_tokns: unknown key (did you mean 'max_tokens'?)"
        in err[1]
    )
    r = harness("eval", "--model", "hf:x", "--tasks", "mine/typo", "--include-path", str(tmp_path),
                "--output-dir", str(tmp_path / "o"))
    assert r.returncode == 2 and "Traceback" not in r.stderr and "max_tokns" in r.stderr
