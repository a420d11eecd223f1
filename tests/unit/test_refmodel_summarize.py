"""examples/reference_models/summarize.py: a family's success rate over seeds (all-OOD accuracy
at least 90%) with its 95% Wilson interval."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]


def _summarize() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refmodels_summarize", ROOT / "examples" / "reference_models" / "summarize.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _wilson(k: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    p = k / n
    mid = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return mid - half, mid + half


def test_success_rate_counts_seeds_at_ninety_percent_ood() -> None:
    line = _summarize().success_line([0.95, 0.2, 0.9, 0.899, 1.0])
    lo, hi = _wilson(3, 5)
    assert line == (f"success (all OOD >= 90%): 3 of 5 seeds, 60% "
                    f"[{100 * lo:.0f}, {100 * hi:.0f}]")
    assert "0 of 3 seeds, 0% [0, 56]" in _summarize().success_line([0.0, 0.5, 0.1])


def _seed(ood_first: float, ood_rest: float) -> tuple[int, dict[str, float], float]:
    acc = {"2": 1.0, "8": 1.0, "9": ood_first, "12": ood_rest, "all ID": 1.0,
           "all OOD": (ood_first + ood_rest) / 2}
    return 0, acc, 1.0


def test_a_clean_five_seed_contrast_is_reproduced_and_one_seed_is_not() -> None:
    mod = _summarize()
    roles = {t: {"2": "ID", "8": "ID", "9": "OOD", "12": "OOD", "all ID": "ID", "all OOD": "OOD"}
             for t in ("reference_copy_unique", "reference_copy_repeat")}
    five = {("reference_copy_unique", "rope"): [_seed(0.97, 0.1)] * 5,
            ("reference_copy_repeat", "rope"): [_seed(0.02, 0.0)] * 5}
    [_, _, row] = mod.contrast_lines(five, roles)
    # edge success 5 of 5 vs 0 of 5: MOVER on exact limits, lower end 1 - hypot(1 - l, u)
    # with l = 0.025 ** (1 / 5) (exact lower limit at 5/5) and u = 1 - l
    low = 1 - math.hypot(1 - 0.025 ** 0.2, 1 - 0.025 ** 0.2)
    assert f"| 100 [{100 * low:.0f}, 100] pts | reproduced (first OOD step only) |" in row
    assert "copy_unique rope: 5 of 5" in row and "copy_repeat rope: 0 of 5" in row
    # a family that never fits the ID range makes no generalization contrast (issue 33)
    unfit = {**five, ("reference_copy_repeat", "rope"): [
        (0, {**_seed(0.02, 0.0)[1], "all ID": 0.5}, 1.0)] * 5}
    [_, _, row_unfit] = mod.contrast_lines(unfit, roles)
    assert "not a generalization contrast" in row_unfit and "0 of 5)" in row_unfit
    one = {k: v[:1] for k, v in five.items()}
    [_, _, row1] = mod.contrast_lines(one, roles)
    assert row1.endswith("| not reproduced (interval includes 0) |")
