"""``--data-parallel 2``: two real HF worker processes give exactly the single-process output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import comparable, load_results, run_harness, samples_bytes


def test_two_processes_match_one(tiny_model_dir: Path, tmp_path: Path, shared_data: Path) -> None:
    tasks = "lengthgen/addition,instructdiv/more_letters"  # generation and multiple choice
    base = ["eval", "--model", f"hf:{tiny_model_dir}", "--tasks", tasks, "--limit-per-bucket",
            "3", "--no-cache"]
    one = run_harness(*base, "--output-dir", str(tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    two = run_harness(*base, "--output-dir", str(tmp_path / "two"), "--data-parallel", "2")
    assert two.returncode == 0, two.stderr
    assert load_results(tmp_path / "two")["run"]["data_parallel"] == 2
    one_r, two_r = (comparable(load_results(tmp_path / d)) for d in ("one", "two"))
    # the samples hash covers the multiple-choice log-probs, which move in the 7th digit (below)
    for t in (*one_r["tasks"], *two_r["tasks"]):
        if t["task"] == "instructdiv/more_letters":
            t.pop("samples_sha256")
    assert two_r == one_r
    one_s, two_s = samples_bytes(tmp_path / "one"), samples_bytes(tmp_path / "two")
    assert one_s["lengthgen/addition.jsonl"] == two_s["lengthgen/addition.jsonl"]
    # float32 sums in a different order (other thread count and batch mix) move log-probs in the
    # 7th digit; everything derived from them (picked choice, score, aggregates) is identical
    for a, b in zip(records(one_s["instructdiv/more_letters.jsonl"]),
                    records(two_s["instructdiv/more_letters.jsonl"]), strict=True):
        assert a.pop("choice_logprobs") == pytest.approx(b.pop("choice_logprobs"), abs=1e-4)
        a.pop("calls"), b.pop("calls")
        assert a == b


def records(data: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in data.decode().splitlines()]


def test_worker_load_failure_is_one_line(tmp_path: Path) -> None:
    r = run_harness("eval", "--model", f"hf:{tmp_path / 'missing'}", "--tasks",
                    "lengthgen/addition", "--data-parallel", "2", "--output-dir",
                    str(tmp_path / "out"))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "missing" in r.stderr


def test_refuses_to_run_under_a_distributed_launcher(tmp_path: Path) -> None:
    r = run_harness("eval", "--model", "hf:x", "--tasks", "lengthgen/addition", "--output-dir",
                    str(tmp_path), env={"WORLD_SIZE": "2"})
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "--data-parallel" in r.stderr


def test_planted_workers_are_told_every_item(tmp_path: Path) -> None:
    """The planted model answers from the items the runner announces (``LM.announce``): under
    ``--data-parallel 2`` every worker is told every item, and the answers are the bytes one
    process gives."""
    base = ["eval", "--model", "planted:", "--model-args", "d50=12,sigma=0.3,top=0.9",
            "--tasks", "lengthgen/copy", "--limit-per-bucket", "8", "--strategy", "cot",
            "--no-cache"]
    one = run_harness(*base, "--output-dir", str(tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    two = run_harness(*base, "--output-dir", str(tmp_path / "two"), "--data-parallel", "2")
    assert two.returncode == 0, two.stderr
    assert samples_bytes(tmp_path / "one") == samples_bytes(tmp_path / "two")
    assert "planted-truth model" in two.stdout
