"""The recurrent reference model (examples/reference_models/modeling_recurrent.py): padded
positions change nothing, the saved folder loads through the hf backend with
trust_remote_code (and only with it), the backend's answers are the model's own greedy
continuation and log-probabilities, and training is byte-identical per seed."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import ModuleType

import pytest

torch = pytest.importorskip("torch")

from harness.errors import HarnessError  # noqa: E402
from harness.requests import GenerateRequest, LoglikelihoodRequest  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
REF = ROOT / "examples" / "reference_models"


def _train() -> ModuleType:
    spec = importlib.util.spec_from_file_location("refmodels_train", REF / "train.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def train() -> ModuleType:
    return _train()


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_padding_is_skipped_wherever_it_is(train: ModuleType, cell: str) -> None:
    torch.manual_seed(0)
    model = train.build_recurrent(cell, 30, 2, 16).eval()
    row = torch.tensor([[5, 6, 7, 8, 9]])
    left = torch.tensor([[0, 0, 5, 6, 7, 8, 9], [3, 4, 4, 4, 4, 4, 4]])
    right = torch.tensor([[5, 6, 7, 8, 9, 0, 0], [3, 4, 4, 4, 4, 4, 4]])
    with torch.no_grad():
        alone = model(input_ids=row).logits[0]
        lp = model(input_ids=left, attention_mask=(left != 0).long()).logits[0, 2:]
        rp = model(input_ids=right, attention_mask=(right != 0).long()).logits[0, :5]
        unmasked = model(input_ids=left).logits[0, 2:]
    scale = float(alone.abs().max())
    assert scale > 0.05
    assert float((alone - lp).abs().max()) < 1e-5 * scale
    assert float((alone - rp).abs().max()) < 1e-5 * scale
    assert float((alone - unmasked).abs().max()) > 1e-2 * scale  # fed, the pads would matter


@pytest.fixture(scope="module")
def saved(train: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("lstm")
    torch.manual_seed(1)
    tok = train.char_tokenizer()
    model = train.build_recurrent("lstm", len(tok), 1, 24)
    model.save_pretrained(out)
    tok.save_pretrained(out)
    assert (out / "modeling_recurrent.py").is_file()
    return out


def test_hf_backend_needs_trust_remote_code(saved: Path) -> None:
    from harness.models.hf.backend import HFModel

    with pytest.raises(HarnessError, match="trust_remote_code") as e:
        HFModel(str(saved), {"device": "cpu"}, batch_size=4)
    assert "\n" not in str(e.value)


def test_hf_backend_answers_are_the_models_own(train: ModuleType, saved: Path) -> None:
    from harness.models.hf.backend import HFModel

    lm = HFModel(str(saved), {"device": "cpu", "trust_remote_code": "true"}, batch_size=4)
    tok, model = train.char_tokenizer(), lm._model  # the loaded copy (from the folder's file)
    prompts = ["1 0 1 =", "a b c d e f\n=>", "7+5="]
    out = lm.generate([GenerateRequest(p, max_tokens=6, stop=[]) for p in prompts])
    for p, r in zip(prompts, out, strict=True):
        ids = tok.encode(p, add_special_tokens=False)
        new: list[int] = []
        with torch.no_grad():
            for _ in range(6):  # plain greedy on the row alone, no batching, no padding
                nxt = int(model(input_ids=torch.tensor([ids + new])).logits[0, -1].argmax())
                if nxt == tok.eos_token_id:
                    break
                new.append(nxt)
        assert r.text == tok.decode(new)
    [ll] = lm.loglikelihood([LoglikelihoodRequest("1 0 1 =", " 0")])
    ids = tok.encode("1 0 1 = 0", add_special_tokens=False)
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([ids])).logits[0], -1)
    want = sum(float(logp[i - 1, ids[i]]) for i in range(len(ids) - 2, len(ids)))
    assert math.isclose(ll.logprob, want, rel_tol=1e-5, abs_tol=1e-5)


def test_lstm_training_is_byte_identical_per_seed(train: ModuleType, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    tasks = REF / "tasks"
    runs = []
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        rec = train.train("reference/parity", None, seed, 4, tmp_path / name, layers=1, d=16,
                          batch_size=8, lr=3e-3, template="bits", include=[tasks], arch="lstm")
        runs.append((tmp_path / name / "model.safetensors").read_bytes())
        assert rec["arch"] == "lstm" and rec["variant"] == "lstm" and rec["heads"] is None
        assert rec["include_paths"] == ["examples/reference_models/tasks"]  # never a local path
        assert set(rec["rows_per_difficulty"]) == {str(v) for v in range(1, 13)}
    assert runs[0] == runs[1] != runs[2]
