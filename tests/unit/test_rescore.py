"""``harness rescore``: a run's numbers computed again from its samples files (issue 23: the
committed runs are brought to the new intervals without asking the model again)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.leaderboard.inputs import load_results
from harness.run.evaluate import evaluate
from harness.run.rescore import rescore
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, oracle_model


@pytest.fixture
def run(tmp_path: Path) -> Path:
    index = TaskIndex.build([])
    [ref] = index.resolve(["lengthgen/addition"])
    cfg = RunConfig(model="scripted:half", tasks=[ref.address], seed=3, limit_per_bucket=6,
                    use_cache=False, templates=["all"], output_dir=tmp_path / "run")
    oracle = oracle_model(index.spec(ref), ref, cfg)
    evaluate(cfg, model=ScriptedLM(lambda p: oracle._text(p) if len(p) % 3 else "no",
                                   name="half"))
    return tmp_path / "run"


def test_rescoring_a_current_run_gives_it_back_byte_for_byte(run: Path) -> None:
    before = (run / "results.json").read_bytes()
    rescore(run)
    assert (run / "results.json").read_bytes() == before


def test_an_older_run_is_brought_up_to_date(run: Path) -> None:
    before = (run / "results.json").read_bytes()
    data = json.loads(before)
    data["schema_version"] = 1
    for rep in data["tasks"][0]["templates"]:  # what a version-1 run had: bootstrap intervals
        gap = rep["gaps"]["id_ood"]
        if gap:
            gap.update(ci_low=gap["value"], ci_high=gap["value"], resamples=1000,
                       method="bootstrap-percentile, items resampled within role")
    (run / "results.json").write_text(json.dumps(data, indent=2))
    with pytest.raises(HarnessError, match=r"schema_version 1 is not supported .* harness "
                                           r"rescore "):
        load_results(run / "results.json")
    r = subprocess.run([sys.executable, "-m", "harness", "rescore", str(run)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (run / "results.json").read_bytes() == before


def test_a_boards_gzip_copy_is_read_and_tampering_is_one_line(run: Path) -> None:
    before = (run / "results.json").read_bytes()
    [samples] = (run / "samples").rglob("*.jsonl")
    data = samples.read_bytes()
    samples.with_name(samples.name + ".gz").write_bytes(gzip.compress(data))
    samples.unlink()
    rescore(run)
    assert (run / "results.json").read_bytes() == before
    samples.with_name(samples.name + ".gz").write_bytes(gzip.compress(data.replace(b"1", b"2")))
    r = subprocess.run([sys.executable, "-m", "harness", "rescore", str(run / "results.json")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "changed after the run" in r.stderr and "lengthgen/addition" in r.stderr
    r = subprocess.run([sys.executable, "-m", "harness", "rescore", str(run / "nowhere")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no such file" in r.stderr
