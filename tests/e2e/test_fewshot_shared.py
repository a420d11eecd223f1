"""``--fewshot-shared``: every item gets the same exemplars (a prompt prefix the hf backend runs
once per batch), recorded in results.json; the default stays a draw per item."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import load_results, run_harness


def _samples(out: Path) -> list[dict[str, object]]:
    files = sorted((out / "samples").rglob("*.jsonl"))
    return [json.loads(line) for f in files for line in f.read_text().splitlines()]


def test_fewshot_shared_cli(tiny_model_dir: Path, tmp_path: Path) -> None:
    common = ["eval", "--model", f"hf:{tiny_model_dir}", "--tasks", "lengthgen/addition",
              "--limit-per-bucket", "2", "--seed", "0", "--num-fewshot", "3", "--no-cache",
              "--batch-size", "8"]
    shared, per_item = tmp_path / "shared", tmp_path / "per_item"
    r = run_harness(*common, "--fewshot-shared", "--output-dir", str(shared))
    assert r.returncode == 0, r.stderr
    r = run_harness(*common, "--output-dir", str(per_item))
    assert r.returncode == 0, r.stderr
    assert load_results(shared)["run"]["fewshot_shared"] is True
    assert load_results(per_item)["run"]["fewshot_shared"] is None
    sets = [s["fewshot_ids"] for s in _samples(shared)]
    assert len(sets) > 4 and all(len(s) == 3 for s in sets)  # type: ignore[arg-type]
    assert len({tuple(s) for s in sets}) <= 2  # type: ignore[arg-type]  # one set (+ a swap)
    assert len({tuple(s["fewshot_ids"]) for s in _samples(per_item)}) > 2  # type: ignore[arg-type]
