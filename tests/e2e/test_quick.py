"""The README's first command, end to end (issue 16): one line, set-up then the demo run; the
run prints its prompt count before the first model call, an estimate of the time left, and
every lengthgen task's table readable at 80 columns. The model is swapped for the tiny test
model (the real one runs in bench/first_result.py, which times it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from first_result import readme_command, with_output_dir  # noqa: E402


def test_readme_first_command_is_one_line_of_setup_then_eval() -> None:
    cmd = readme_command()
    assert cmd[:2] == [".venv/bin/harness", "eval"]
    assert cmd[cmd.index("--model") + 1] == "hf:smollm2-135m"
    assert cmd[cmd.index("--tasks") + 1] == "lengthgen"
    assert int(cmd[cmd.index("--limit-per-bucket") + 1]) <= 20  # a first look, not the full run


def test_readme_demo_prints_count_estimate_and_tables(tmp_path: Path,
                                                      tiny_model_dir: Path) -> None:
    cmd = with_output_dir(readme_command(), tmp_path / "out")
    cmd[cmd.index("--model") + 1] = f"hf:{tiny_model_dir}"
    cmd = [sys.executable, "-m", "harness", *cmd[1:]]
    env = {**os.environ, "COLUMNS": "80", "GENHARNESS_RESPONSE_CACHE": str(tmp_path / "resp")}
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    err = r.stderr.splitlines()
    limit = int(cmd[cmd.index("--limit-per-bucket") + 1])
    count = [i for i, line in enumerate(err) if line.endswith(" prompts in 13 tasks")]
    assert len(count) == 1 and count[0] < 2, err[:5]  # before any task's own line
    total = int(err[count[0]].split()[0].replace(",", ""))
    written = sum(1 for p in (tmp_path / "out" / "samples").rglob("*.jsonl") for _ in p.open())
    assert total == written
    assert sum(line.endswith("left (estimated)") for line in err) == 12, err
    out = [line for line in r.stdout.splitlines() if not line.startswith("wrote ")]  # a path
    assert all(len(line) <= 80 for line in out), max(out, key=len)
    titles = [line for line in out if line.startswith("lengthgen/") and "[template " in line]
    assert len(titles) == 13
    assert f"at most {limit} items per bucket" in r.stdout
