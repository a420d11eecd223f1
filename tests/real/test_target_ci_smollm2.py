"""``harness eval --target-ci`` on SmolLM2-135M-Instruct: each round asks the model only for its
new items (earlier rounds come from the response cache), and the finished folder is a plain run
at the last round's limit."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


def _eval(tmp_path: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--tasks",
            "lengthgen/copy", "--seed", "0", "--cache-dir", str(tmp_path / "cache"),
            "--output-dir", str(tmp_path / out), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "120"})


def test_rounds_reuse_the_cache_and_end_as_a_plain_run(tmp_path: Path) -> None:
    r = _eval(tmp_path, "rounds", "--target-ci", "0.2", "--first-round", "2",
              "--limit-per-bucket", "8")
    assert r.returncode == 0, r.stderr
    info = json.loads((tmp_path / "rounds" / "rounds.json").read_text())
    limits = [x["limit"] for x in info["rounds"]]
    assert limits == [2, 4, 8][: len(limits)] and len(limits) >= 2, info
    assert r.stderr.count("round at ") == len(limits)
    res = json.loads((tmp_path / "rounds" / "results.json").read_text())
    assert res["run"]["limit_per_bucket"] == limits[-1]
    # the last round asked the model only for the items the round before did not have
    assert res["cache"]["hits"] == info["rounds"][-2]["samples"]
    assert res["cache"]["misses"] == info["rounds"][-1]["samples"] - res["cache"]["hits"]
    p = _eval(tmp_path, "plain", "--limit-per-bucket", str(limits[-1]))
    assert p.returncode == 0, p.stderr
    plain = json.loads((tmp_path / "plain" / "results.json").read_text())
    assert plain["cache"]["misses"] == 0  # every response was already cached by the rounds
    f = res["tasks"][0]["samples_file"]
    assert (tmp_path / "rounds" / f).read_bytes() == (tmp_path / "plain" / f).read_bytes()
