"""train.py --curriculum: the longest trained difficulty rises from the ID range's min to its
max over the ramp, shortest first, and every row passes after it; the training record counts the
rows actually trained per difficulty."""

from __future__ import annotations

import importlib.util
import itertools
import json
from pathlib import Path
from types import ModuleType

import pytest

pytest.importorskip("torch")

REF = Path(__file__).resolve().parents[2] / "examples" / "reference_models"


def _train() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refmodels_train_cur", REF / "train.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_cap_rises_over_the_ramp_and_then_lets_every_row_through() -> None:
    rows = ({"difficulty": float(1 + i % 12)} for i in itertools.count())  # 1..12 in turn
    staged = list(itertools.islice(_train().curriculum_rows(rows, 1, 12, 110), 300))
    caps = [cap for cap, _ in staged]
    assert caps[0] == 1 and caps == sorted(caps) and caps[-1] == 12
    assert all(float(str(r["difficulty"])) <= cap for cap, r in staged)
    early = [float(str(r["difficulty"])) for _, r in staged[:10]]
    assert set(early) == {1.0}  # only the shortest at first
    late = {float(str(r["difficulty"])) for _, r in staged[110:]}
    assert late == {float(v) for v in range(1, 13)}  # after the ramp: every length
    none = list(itertools.islice(_train().curriculum_rows(
        ({"difficulty": 12.0} for _ in itertools.count()), 1, 12, 0), 3))
    assert [cap for cap, _ in none] == [12, 12, 12]  # ramp 0: no curriculum


def test_a_curriculum_run_records_what_it_trained(tmp_path: Path) -> None:
    rec = _train().train("reference/parity", "rope", 0, 8, tmp_path / "m", layers=1, d=16,
                         heads=2, batch_size=8, include=[REF / "tasks"], curriculum=1.0)
    saved = json.loads((tmp_path / "m" / "train.json").read_text(encoding="utf-8"))
    assert saved["curriculum"] == 1.0 and rec["curriculum"] == 1.0
    trained = {float(k): n for k, n in saved["rows_per_difficulty"].items()}
    assert sum(trained.values()) == 8 * 8  # steps × batch, however many rows were skipped
    assert min(trained) == 1.0 and max(trained) < 12  # a ramp over all steps never reaches 12
