"""``harness eval --tasks lengthgen/copy --horizon`` on SmolLM2-135M-Instruct (issue 34): the
eval table prints d50 with an interval (or a censored or floor statement), the second run of the
same seed prints the same line (from the response cache, with the model never asked again), and a
run without the cache gives the same search."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
LINE = re.compile(r"horizon d50 \(io\): (.*)")


def _eval(tmp_path: Path, out: str, *extra: str) -> subprocess.CompletedProcess[str]:
    args = [sys.executable, "-m", "harness", "eval", "--model", "hf:smollm2-135m", "--tasks",
            "lengthgen/copy", "--seed", "0", "--limit-per-bucket", "10", "--horizon-items", "40",
            "--cache-dir", str(tmp_path / "cache"), "--output-dir", str(tmp_path / out), *extra]
    return subprocess.run(args, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "COLUMNS": "200"})


def test_copy_prints_d50_and_the_same_seed_prints_it_again(tmp_path: Path) -> None:
    first = _eval(tmp_path, "a")
    assert first.returncode == 0, first.stderr
    (line,) = LINE.findall(first.stdout)
    assert re.match(r"(\S+ length = [\d.]+× the ID edge 8(, inside the ID range \(the "
                    r"whole interval below the edge\))?  95% interval \[[^,\]]+, \S+\]"
                    r"|≥ 64 length|none \(the ID level)", line), line
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    (h,) = res["tasks"][0]["horizons"]
    assert h["items"] == 40 and sum(n for _, _, n in h["points"]) == 40
    again = _eval(tmp_path, "b")
    assert again.returncode == 0, again.stderr
    assert LINE.findall(again.stdout) == [line]
    assert json.loads((tmp_path / "b" / "results.json").read_text())["cache"]["misses"] == 0
    fresh = _eval(tmp_path, "c", "--no-cache")
    assert fresh.returncode == 0, fresh.stderr
    assert LINE.findall(fresh.stdout) == [line]
