"""A prefix shared by every row of a batch is run once and gives the same answers (tiny random
Llama): greedy generation, plain scoring and shared-context scoring. No timing here."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.models import aliases
from harness.requests import GenerateRequest, LoglikelihoodRequest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.models.hf import prefix as hf_prefix  # noqa: E402
from harness.models.hf.backend import HFModel  # noqa: E402

SHOTS = ("Q: 12 + 30 = ?\nA: 42\n\nQ: 7 + 8 = ?\nA: 15\n\nQ: 100 + 1 = ?\nA: 101\n\n"
         "Q: 55 + 45 = ?\nA: 100\n\n")
QUESTIONS = ["Q: 1 + 1 = ?\nA:", "Q: 250 + 250 = ?\nA:", "Q: 9 + 10 = ?\nA:",
             "Q: 123456 + 654321 = ?\nA:", "Q: 3 + 4 = ?\nA:"]
CHOICES = [" 2", " 500", " 19", " 777777", " seven", " 1 2 3 4"]


@pytest.fixture(scope="module", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(aliases.CACHE_ENV, str(tmp_path_factory.mktemp("genharness_cache")))
        yield tmp_path_factory.getbasetemp()


def _spy(lm: HFModel) -> list[tuple[int, int, bool]]:
    """Record (rows, tokens fed, cache given) of every forward pass."""
    calls: list[tuple[int, int, bool]] = []
    forward = lm._model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        ids = kwargs["input_ids"]
        calls.append((ids.shape[0], ids.shape[1], kwargs.get("past_key_values") is not None))
        return forward(*args, **kwargs)

    lm._model.forward = spy
    return calls


def test_common_prefix() -> None:
    base = list(range(100, 140))
    rows = [base + [1, 2], base + [3], base[:30] + [9]]
    assert hf_prefix.common_prefix(rows, 99) == 30
    assert hf_prefix.common_prefix(rows, 20) == 20  # capped
    assert hf_prefix.common_prefix(rows, 10) == 0  # under MIN_SHARED: not worth a pass
    assert hf_prefix.common_prefix([base, base[:10] + [7] * 30], 99) == 0
    assert hf_prefix.common_prefix([base], 99) == 0  # one row: nothing to share


def test_greedy_with_shared_prefix_matches_unshared(tiny_model_dir: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    reqs = [GenerateRequest(SHOTS + q, max_tokens=4 + 2 * i, stop=("\n",))
            for i, q in enumerate(QUESTIONS)]
    lm = HFModel(str(tiny_model_dir), {}, batch_size=8)
    calls = _spy(lm)
    fast = lm.generate(reqs)
    # the prefix ran once as a batch of one; the prompts' own tokens were fed on top of it
    prefix_len = len(lm._prompt_ids(reqs[0])) - 1
    assert calls[0][0] == 1 and calls[0][1] >= hf_prefix.MIN_SHARED
    assert calls[1][0] == len(reqs) and calls[1][2] and calls[1][1] < prefix_len
    monkeypatch.setattr(hf_prefix, "MIN_SHARED", 10**9)
    unshared = lm.generate(reqs)
    lm._fast = False  # model.generate
    assert fast == unshared == lm.generate(reqs)


@pytest.mark.parametrize("choices", [CHOICES[:1], CHOICES])  # plain rows / shared contexts
def test_scoring_with_shared_prefix_matches_unshared(tiny_model_dir: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     choices: list[str]) -> None:
    reqs = [LoglikelihoodRequest(SHOTS + q, c) for q in QUESTIONS for c in choices]
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    calls = _spy(lm)
    got = lm.loglikelihood(reqs)
    assert calls[0][0] == 1 and calls[0][1] >= hf_prefix.MIN_SHARED  # the prefix, once
    monkeypatch.setattr(hf_prefix, "MIN_SHARED", 10**9)
    want = lm.loglikelihood(reqs)
    one_by_one = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)
    for g, w, o in zip(got, want, one_by_one, strict=True):
        assert g.logprob == pytest.approx(w.logprob, rel=1e-6, abs=1e-5)  # float noise
        assert g.logprob == pytest.approx(o.logprob, rel=1e-6, abs=1e-5)
        assert (g.is_greedy, g.n_tokens) == (w.is_greedy, w.n_tokens)


def test_shared_prefix_is_kept_across_batches(tiny_model_dir: Path) -> None:
    words = ["apple", "banana pie", "cherry", "date tree x", "elder", "fig leaf"]
    reqs = [GenerateRequest(SHOTS + f"Q: {w} = ?\nA:", max_tokens=3) for w in words]
    lm = HFModel(str(tiny_model_dir), {}, batch_size=2)  # three batches of two
    calls = _spy(lm)
    out = lm.generate(reqs)
    prefills = [c for c in calls if c[1] > 1]
    assert [c[0] for c in prefills] == [1, 2, 2, 2]  # the prefix ran once for all batches
    assert all(c[2] for c in prefills[1:])
    fresh = HFModel(str(tiny_model_dir), {}, batch_size=1)  # one row per batch: no sharing
    assert out == fresh.generate(reqs)
