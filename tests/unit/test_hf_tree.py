"""Continuation trees (hf_tree): one forward pass per batch of contexts, each context followed by
the prefix tree of its choices, gives the scores separate passes give (tiny random Llama), with
either attention implementation, with a shared prompt prefix, and falls back when it must."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.models import aliases
from harness.requests import LoglikelihoodRequest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.models import hf_score, hf_tree  # noqa: E402
from harness.models.hf import HFModel  # noqa: E402

SHOTS = "Q: 12 + 30 = ?\nA: 42\n\nQ: 7 + 8 = ?\nA: 15\n\nQ: 100 + 1 = ?\nA: 101\n\n"
QUESTIONS = ["Q: 1 + 1 = ?\nA:", "Q: 250 + 250 = ?\nA:", "Q: 123456 + 654321 = ?\nA:", "Hi"]
# choices that share leading tokens (numbers a digit apart, words with a common start)
CHOICES = [" 777777", " 777778", " 777787", " 2", " 20", " the cat sat", " the cat ran", " x"]


@pytest.fixture(scope="module", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(aliases.CACHE_ENV, str(tmp_path_factory.mktemp("genharness_cache")))
        yield tmp_path_factory.getbasetemp()


def test_build_tree_feeds_each_prefix_once() -> None:
    tree = hf_tree.build_tree([[1, 2, 3], [1, 2, 4], [1, 5], [6], [1, 2, 3, 7]])
    assert tree.tokens == [1, 2, 3]  # prefixes (1), (1, 2), (1, 2, 3): last tokens never fed
    assert tree.parents == [-1, 0, 1] and tree.depths == [1, 2, 3]
    assert tree.sources == [[0, 1, 2], [0, 1, 2], [0, 1], [0], [0, 1, 2, 3]]


def _spy(lm: HFModel) -> list[tuple[int, int, int]]:
    """(rows, tokens, mask dims) of every forward pass."""
    calls: list[tuple[int, int, int]] = []
    forward = lm._model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        ids = kwargs["input_ids"]
        mask = kwargs.get("attention_mask")  # none for the shared prefix's own pass
        calls.append((ids.shape[0], ids.shape[1], 0 if mask is None else mask.dim()))
        return forward(*args, **kwargs)

    lm._model.forward = spy
    return calls


def _check(got: list[Any], want: list[Any]) -> None:
    for g, w in zip(got, want, strict=True):  # float rounding: sdpa's kernel with an explicit
        # mask over a kept prefix rounds differently (2.7e-5 seen, 1.1e-5 for the other ways)
        assert g.logprob == pytest.approx(w.logprob, rel=1e-6, abs=4e-5)
        assert (g.is_greedy, g.n_tokens) == (w.is_greedy, w.n_tokens)


@pytest.mark.parametrize("attention", ["sdpa", "eager"])
@pytest.mark.parametrize("shots", ["", SHOTS])
def test_tree_matches_separate_passes(tiny_model_dir: Path, attention: str, shots: str) -> None:
    reqs = [LoglikelihoodRequest(shots + q, c) for q in QUESTIONS for c in CHOICES]
    separate = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)
    lm = HFModel(str(tiny_model_dir), {}, batch_size=16)
    lm._model.set_attn_implementation(attention)
    assert lm._tree
    calls = _spy(lm)
    got = lm.loglikelihood(reqs)
    _check(got, separate)
    tree_calls = [c for c in calls if c[2] == 4]
    assert len(tree_calls) == 2  # 32 rows at 16: two passes of 2 contexts each, nothing else
    assert all(rows == 2 for rows, _, _ in tree_calls)
    assert len(calls) == 2 + (2 if shots else 0)  # + the shared exemplars, once per batch


def test_tree_feeds_fewer_tokens_than_two_passes(tiny_model_dir: Path) -> None:
    reqs = [LoglikelihoodRequest(q, c) for q in QUESTIONS for c in CHOICES]
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    calls = _spy(lm)
    tree = lm.loglikelihood(reqs)
    tree_fed = sum(r * t for r, t, _ in calls)
    calls.clear()
    lm._tree = False  # the two-pass way: contexts, then every continuation on a copied cache
    two_pass = lm.loglikelihood(reqs)
    assert len(calls) == 2 and sum(r * t for r, t, _ in calls) > tree_fed
    _check(tree, two_pass)


def test_tree_falls_back_over_the_mask_budget(tiny_model_dir: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    reqs = [LoglikelihoodRequest(q, c) for q in QUESTIONS for c in CHOICES]
    want = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)
    monkeypatch.setattr(hf_tree, "MASK_BUDGET", 0)
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    calls = _spy(lm)
    _check(lm.loglikelihood(reqs), want)
    assert [c[2] for c in calls] == [2, 2]  # the two-pass way, 2D masks


def test_tree_needs_a_mask_taking_attention_and_a_long_enough_window(
        tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=8)
    model = lm._model
    assert hf_tree.usable(model, 100)
    model.config.sliding_window = 64
    assert hf_tree.usable(model, 64) and not hf_tree.usable(model, 65)
    model.config.sliding_window = None
    monkeypatch.setattr(hf_tree, "TREE_ATTENTION", ("eager",))  # as if sdpa ignored the mask
    assert not hf_tree.usable(model, 10)
    rows = [lm._ll_row(LoglikelihoodRequest("Q: 1 + 1 = ?\nA:", c)) for c in CHOICES]
    calls = _spy(lm)
    hf_score.score_batch(model, rows, lm._pad, lm._keep_arg, True, None, tree=True)
    assert calls and all(dims == 2 for _, _, dims in calls)  # not the tree way


def test_probe_catches_a_model_that_ignores_the_mask(tiny_model_dir: Path) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=8)
    model = lm._model
    assert lm._tree and hf_tree.tree_agrees(model, lm._keep_arg, lm._vocab)
    forward = model.forward

    def causal_only(*args: Any, **kwargs: Any) -> Any:  # plain causal attention instead
        if kwargs.get("attention_mask") is not None and kwargs["attention_mask"].dim() == 4:
            kwargs["attention_mask"] = None
        return forward(*args, **kwargs)

    model.forward = causal_only
    assert not hf_tree.tree_agrees(model, lm._keep_arg, lm._vocab)


def test_model_failing_the_probe_scores_in_two_passes(tiny_model_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    import harness.models.hf as hf

    monkeypatch.setattr(hf, "tree_agrees", lambda *a: False)
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    assert not lm._tree
    calls = _spy(lm)
    reqs = [LoglikelihoodRequest(q, c) for q in QUESTIONS for c in CHOICES]
    _check(lm.loglikelihood(reqs), HFModel(str(tiny_model_dir), {}, batch_size=1)
           .loglikelihood(reqs))
    assert [c[2] for c in calls] == [2, 2]
