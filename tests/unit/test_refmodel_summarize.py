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
