"""Token tries (hf.tree): a scoring batch fed as its distinct token prefixes, in one forward pass
with a custom attention mask, gives the scores separate passes give (tiny random Llama), with
either attention implementation, with a kept shared prompt prefix, packed into several rows,
and falls back when it must."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.models import aliases
from harness.requests import LoglikelihoodRequest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.models.hf import score as hf_score  # noqa: E402
from harness.models.hf import tree as hf_tree  # noqa: E402
from harness.models.hf.backend import HFModel  # noqa: E402

SHOTS = "Q: 12 + 30 = ?\nA: 42\n\nQ: 7 + 8 = ?\nA: 15\n\nQ: 100 + 1 = ?\nA: 101\n\n"
QUESTIONS = ["Q: 1 + 1 = ?\nA:", "Q: 250 + 250 = ?\nA:", "Q: 123456 + 654321 = ?\nA:", "Hi"]
# choices that share leading tokens (numbers a digit apart, words with a common start)
CHOICES = [" 777777", " 777778", " 777787", " 2", " 20", " the cat sat", " the cat ran", " x"]


@pytest.fixture(scope="module", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(aliases.CACHE_ENV, str(tmp_path_factory.mktemp("genharness_cache")))
        yield tmp_path_factory.getbasetemp()


def test_trie_feeds_each_prefix_once() -> None:
    trie = hf_tree.Trie()
    rows = [([1, 2, 3], 1), ([1, 2, 4], 1), ([1, 5], 1), ([6, 7], 1), ([1, 2, 3, 7], 2)]
    sources = [trie.add(t, n) for t, n in rows]
    # prefixes (1), (1, 2), (6), (1, 2, 3); whole rows are never fed
    assert trie.tokens == [1, 2, 6, 3] and trie.parents == [-1, 0, -1, 1]
    assert trie.depths == [1, 2, 1, 3] and trie.read == [True, True, True, True]
    assert sources == [[1], [1], [0], [2], [1, 3]]
    assert hf_tree.trie_size(rows, [0, 1, 2, 3, 4]) == 4


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
    assert len(tree_calls) == 2  # 32 rows at 16: one pass per batch, nothing else
    # two contexts per batch with little in common: a row each (``_pack``)
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
    import harness.models.hf.backend as hf

    monkeypatch.setattr(hf, "tree_agrees", lambda *a: False)
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    assert not lm._tree
    calls = _spy(lm)
    reqs = [LoglikelihoodRequest(q, c) for q in QUESTIONS for c in CHOICES]
    _check(lm.loglikelihood(reqs), HFModel(str(tiny_model_dir), {}, batch_size=1)
           .loglikelihood(reqs))
    assert [c[2] for c in calls] == [2, 2]


def test_trie_packed_into_several_rows(tiny_model_dir: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    reqs = [LoglikelihoodRequest(SHOTS + q, c) for q in QUESTIONS for c in CHOICES]
    want = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)
    monkeypatch.setattr(hf_tree, "PACK_TOKENS", 8)  # a row per item, ancestors repeated
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    calls = _spy(lm)
    _check(lm.loglikelihood(reqs), want)
    trie_calls = [c for c in calls if c[2] == 4]
    assert len(trie_calls) == 1 and trie_calls[0][0] > 1  # one pass, several packed rows


def test_template_opening_fed_once(tiny_model_dir: Path) -> None:
    # different contexts, one choice each: only the shared opening "Q: " can be saved
    reqs = [LoglikelihoodRequest(f"Question: What is the answer to question number {k}?",
                                 " yes") for k in range(8)]
    lm = HFModel(str(tiny_model_dir), {}, batch_size=8)
    rows = [lm._ll_row(r) for r in reqs]
    live = list(range(len(rows)))
    assert hf_tree.trie_size(rows, live) < 0.6 * sum(len(t) - 1 for t, _ in rows)
    calls = _spy(lm)
    _check(lm.loglikelihood(reqs), HFModel(str(tiny_model_dir), {}, batch_size=1)
           .loglikelihood(reqs))
    assert calls[-1][2] == 4 and 2 not in [c[2] for c in calls]  # (0: a kept-prefix pass)


def test_pack_joins_contexts_only_when_their_opening_pays(monkeypatch: pytest.MonkeyPatch) -> None:
    opening = list(range(100, 110))  # ten tokens every context starts with
    def item(ctx: list[int]) -> list[tuple[list[int], int]]:
        return [(ctx + [c, c + 1], 2) for c in (1, 3)]  # two choices of two tokens
    common = [r for k in range(6) for r in item(opening + [200 + k, 300 + k])]
    apart = [r for k in range(6) for r in item([400 + 10 * k + j for j in range(12)])]
    packs = hf_tree._pack(common, list(range(len(common))), 0)
    assert len(packs) == 1 and len(packs[0][0].tokens) == 10 + 6 * (2 + 2)
    packs = hf_tree._pack(apart, list(range(len(apart))), 0)
    assert len(packs) == 6 and all(len(t.tokens) == 12 + 2 for t, _ in packs)
    monkeypatch.setattr(hf_tree, "PACK_TOKENS", 20)  # balanced rows of about 20 nodes
    packs = hf_tree._pack(common, list(range(len(common))), 0)
    assert [len(src) for _, src in packs] == [6, 6]  # 34 nodes: two rows of three contexts
