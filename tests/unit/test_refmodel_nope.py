"""The reference models' "nope" variant (GPT-NeoX, partial_rotary_factor 0) has no position
signal: with one layer, the last position's output ignores the order of the tokens before it;
the rotary and learned variants do not."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]


def _train() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "refmodels_train", ROOT / "examples" / "reference_models" / "train.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(("variant", "order_blind"), [
    ("nope", True), ("rope", False), ("learned", False)])
def test_only_nope_ignores_token_order(variant: str, order_blind: bool) -> None:
    train = _train()
    torch.manual_seed(0)
    model = train.build_model(variant, 100, 1, 32, 4, 64).eval()
    ids = torch.tensor([[5, 17, 42, 8, 33, 71, 9]])
    perm = torch.tensor([[33, 8, 71, 5, 42, 17, 9]])  # same tokens before the last, reordered
    with torch.no_grad():
        a = model(input_ids=ids).logits[0, -1]
        b = model(input_ids=perm).logits[0, -1]
    assert torch.allclose(a, b, atol=1e-5) is order_blind
