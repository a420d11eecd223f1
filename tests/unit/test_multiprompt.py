"""Multi-prompt scores (MaxP, AvgP, CPS, spread, worst) by hand and on the paper's per-paraphrase
accuracy files, and the ``multi_prompt`` analysis over hand-built samples."""

from __future__ import annotations

import csv
import statistics
from pathlib import Path
from typing import Literal

import pytest

from harness.analyses.multiprompt import multi_prompt, prompt_scores, read_accuracy_table
from harness.analyses.registry import get_analysis
from harness.errors import HarnessError
from harness.scoring.records import SampleRecord


def test_prompt_scores_by_hand() -> None:
    s = prompt_scores({"a": 0.8, "b": 0.6, "c": 0.4})
    assert (s.max_p, s.worst, s.n_templates) == (0.8, 0.4, 3)
    assert s.avg_p == pytest.approx(0.6)
    assert s.cps == pytest.approx((1 - (0.8 - 0.6)) * 0.8)  # 0.64
    assert s.spread == pytest.approx(0.4)
    assert (s.best_template, s.worst_template) == ("a", "c")
    one = prompt_scores({"only": 0.3})  # a single template: CPS = MaxP, no spread
    assert (one.max_p, one.avg_p, one.cps, one.spread) == (0.3, 0.3, 0.3, 0.0)
    flat = prompt_scores({"x": 0.5, "y": 0.5})
    assert flat.cps == 0.5 and flat.best_template == "x"
    # a model that is great on one template and poor elsewhere scores below a uniform one
    assert prompt_scores({"a": 0.9, "b": 0.1}).cps == pytest.approx(0.9 * 0.6)
    with pytest.raises(ValueError, match="no templates"):
        prompt_scores({})
    with pytest.raises(ValueError, match="outside"):
        prompt_scores({"a": 1.5})


ACC_DIR = "multiprompt/paraphrases accuracies"


def _independent(path: Path) -> dict[str, tuple[float, float, float]]:
    """MaxP, AvgP, CPS per model, straight from the CSV with the ``statistics`` module."""
    with path.open(newline="") as f:
        rows = list(csv.DictReader(f))
    out = {}
    for col in rows[0]:
        if col == "paraphrase idx":
            continue
        vals = [float(r[col]) for r in rows if r[col] != ""]
        mx, avg = max(vals), statistics.fmean(vals)
        out[col.removesuffix("_acc")] = (mx, avg, (1 - (mx - avg)) * mx)
    return out


def test_paper_accuracy_files(shared_data: Path) -> None:
    files = sorted((shared_data / ACC_DIR).glob("*/*.csv"))
    assert len(files) >= 20  # 10 LMentry + 15 BBH tasks
    for path in files:
        table = read_accuracy_table(path)
        expected = _independent(path)
        assert set(table) == set(expected) and len(table) >= 10
        for model, accs in table.items():
            s = prompt_scores(accs)
            mx, avg, cps = expected[model]
            assert s.max_p == pytest.approx(mx) and s.avg_p == pytest.approx(avg)
            assert s.cps == pytest.approx(cps)
            assert s.worst <= s.avg_p <= s.max_p and s.cps <= s.max_p


def test_paper_file_slice_by_hand(shared_data: Path) -> None:
    # first_alphabetically, paraphrases 1-4, t0pp: 0.48, 0.49, 0.51, 0.56 (rows of the file)
    table = read_accuracy_table(shared_data / ACC_DIR / "LMentry" / "first_alphabetically.csv")
    t0pp = {k: v for k, v in table["t0pp"].items() if k in {"1", "2", "3", "4"}}
    assert t0pp == {"1": 0.48, "2": 0.49, "3": 0.51, "4": 0.56}
    s = prompt_scores(t0pp)
    assert s.max_p == 0.56 and s.avg_p == pytest.approx(0.51)
    assert s.cps == pytest.approx(0.95 * 0.56)  # 0.532
    assert s.spread == pytest.approx(0.08) and s.best_template == "4"


def test_read_accuracy_table_errors(tmp_path: Path) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text("idx,m_acc\n1,abc\n")
    with pytest.raises(HarnessError, match="bad.csv:2: not a number"):
        read_accuracy_table(bad)
    with pytest.raises(HarnessError, match="cannot read"):
        read_accuracy_table(tmp_path / "missing.csv")
    ok = tmp_path / "ok.csv"
    ok.write_text("idx,m_acc,n\n1,0.5,\n2,0.7,0.1\n")
    assert read_accuracy_table(ok) == {"m": {"1": 0.5, "2": 0.7}, "n": {"2": 0.1}}


def rec(item: int, template: str, score: float, role: Literal["ID", "OOD"] = "ID") -> SampleRecord:
    return SampleRecord(
        task="t/x", id=str(item), template=template, fewshot_ids=[], difficulty=0.0,
        bucket="0", bucket_index=0, role=role, prompt="p", target="y", output="", extracted="",
        score=score,
    )


# 4 items x 4 templates; seen s1 s2, unseen u1 u2
SCORES = {
    "s1": [1, 1, 1, 0],  # 0.75
    "s2": [1, 1, 0, 0],  # 0.50
    "u1": [1, 0, 0, 0],  # 0.25
    "u2": [0, 0, 0, 0],  # 0.00
}


def samples() -> list[SampleRecord]:
    return [rec(i, t, float(v)) for t, vals in SCORES.items() for i, v in enumerate(vals)]


def test_multi_prompt_analysis_by_hand() -> None:
    assert get_analysis("multi_prompt") is multi_prompt
    r = multi_prompt(samples(), [], {"seen": ["s1", "s2"], "bootstrap": 500}, 7)
    d = r.details
    assert {t: v["accuracy"] for t, v in d["per_template"].items()} == \
        {"s1": 0.75, "s2": 0.5, "u1": 0.25, "u2": 0.0}
    assert d["per_template"]["s1"] == {"accuracy": 0.75, "n": 4, "seen": True}
    assert d["per_template"]["u2"]["seen"] is False
    assert (d["max_p"], d["avg_p"], d["spread"], d["worst"]) == (0.75, 0.375, 0.75, 0.0)
    assert r.value == d["cps"] == pytest.approx((1 - 0.375) * 0.75)  # 0.46875
    assert (d["best_template"], d["worst_template"], r.n) == ("s1", "u2", 4)
    assert r.ci_low is not None and r.ci_high is not None and r.ci_low <= r.value <= r.ci_high
    gap = d["seen_unseen_gap"]
    assert gap["value"] == pytest.approx(0.625 - 0.125)
    assert (gap["avg_seen"], gap["avg_unseen"], gap["n_items"]) == (0.625, 0.125, 4)
    assert gap["seen"] == ["s1", "s2"] and gap["unseen"] == ["u1", "u2"]
    # per-item seen-unseen differences are 1, 1, 0.5, 0: every resample mean lies in [0, 1]
    assert -1.0 <= gap["ci_low"] < gap["value"] < gap["ci_high"] <= 1.0
    assert "paired MOVER" in gap["method"]
    again = multi_prompt(samples(), [], {"seen": ["s1", "s2"], "bootstrap": 500}, 7)
    assert again == r  # seeded
    other = multi_prompt(samples(), [], {"seen": ["s1", "s2"], "bootstrap": 500}, 8)
    assert other.value == r.value


def test_multi_prompt_roles_and_edge_cases() -> None:
    mixed = samples() + [rec(9, t, 1.0, role="OOD") for t in SCORES]
    ood = multi_prompt(mixed, [], {"role": "OOD", "seen": ["s1"]}, 0)
    assert ood.n == 1 and ood.value == 1.0 and ood.details["spread"] == 0.0
    all_ = multi_prompt(mixed, [], {}, 0)
    assert all_.n == 5 and all_.details["seen_unseen_gap"] is None  # no seen templates named
    assert multi_prompt(samples(), [], {"role": "OOD"}, 0).value is None
    with pytest.raises(ValueError, match="params.seens: Extra inputs"):
        multi_prompt(samples(), [], {"seens": []}, 0)
    with pytest.raises(ValueError, match="role"):
        multi_prompt(samples(), [], {"role": "both"}, 0)


def test_cps_at_the_boundary_is_an_interval_not_a_point() -> None:
    """Issue 23: every template at 0% made every bootstrap resample's CPS 0: [0, 0]. The
    interval is now the bound CPS must lie in: up to the largest template's exact upper limit."""
    zero = [rec(i, t, 0.0) for i in range(6) for t in ("a", "b")]
    r = multi_prompt(zero, [], {"bootstrap": 200}, 0)
    assert r.value == 0.0 and r.ci_low == 0.0
    assert r.ci_high == pytest.approx(1 - 0.025 ** (1 / 6))  # exact upper limit of 0/6
    full = multi_prompt([x.model_copy(update={"score": 1.0}) for x in zero], [], {}, 0)
    assert full.value == 1.0 and full.ci_high == 1.0
    assert full.ci_low is not None and 0.0 < full.ci_low < 1.0
