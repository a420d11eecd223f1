"""The whole lengthgen suite through ``harness eval`` on SmolLM2-135M (slow)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.tasks.index import TaskIndex

pytestmark = pytest.mark.slow


def test_lengthgen_suite_on_smollm2(tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--tasks",
         "lengthgen", "--limit-per-bucket", "3", "--seed", "0", "--output-dir", str(out)],
        capture_output=True, text=True, timeout=1800, env={**os.environ, "COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    expected = sorted(ref.address for ref in TaskIndex.build().resolve(["lengthgen"]))
    res = json.loads((out / "results.json").read_text())
    tasks = {t["task"]: t for t in res["tasks"]}
    assert sorted(tasks) == expected
    for t in tasks.values():
        assert t["n_items"] > 0 and t["templates"][0]["roles"]
    # a working pipeline gets easy ID items right on the tasks SmolLM2 can do in few-shot
    # (copying short strings, counting, short passkey contexts); a broken prompt, stop or
    # extraction would score nothing
    def id_correct(task: str) -> float:
        roles = tasks[f"lengthgen/{task}"]["templates"][0]["roles"]
        return float(next(x["correct"] for x in roles if x["role"] == "ID"))

    assert id_correct("copy") >= 3 and id_correct("count") >= 3 and id_correct("passkey") >= 2
    passkey = tasks["lengthgen/passkey"]
    (eff,) = passkey["analyses"]
    assert eff["name"] == "effective_length" and eff["n"] == 12
    rows = eff["details"]["per_length"]
    assert [row["length"] for row in rows] == [128, 256, 512, 1024]
