"""The hf backend's fast paths give the same answers as the plain ones (tiny random Llama):
shared-context scoring, the greedy decoding loop with per-row stops and batch compaction, and
length-sorted grouping. No timing here: speed is measured in bench/."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.models import aliases
from harness.requests import Collator, GenerateRequest, LoglikelihoodRequest, RollingRequest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

from harness.models.hf import generate as hf_generate  # noqa: E402
from harness.models.hf import score as hf_score  # noqa: E402
from harness.models.hf.backend import HFModel  # noqa: E402

CONTEXTS = [
    "Question: What is 2+3? Answer:",
    "The capital of France is",
    "Once upon a time there was a small model that liked to count: one, two,",
    "0 1 2 3 4 5 6 7 8 9",
    "hel",
]
CHOICES = [" 5", " Paris", " three four five", " 10 11", "lo world", "!", " a b c d e f"]
PROMPTS = [
    "The capital of France is",
    "Question: What is 2+3? Answer:",
    "hello",
    "Once upon a time there was a small model that liked to count: one, two,",
    "a b c",
    "0 1 2 3 4 5 6 7 8 9",
]


@pytest.fixture(scope="module", autouse=True)
def _cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(aliases.CACHE_ENV, str(tmp_path_factory.mktemp("genharness_cache")))
        yield tmp_path_factory.getbasetemp()


def mc_requests() -> list[LoglikelihoodRequest]:
    return [LoglikelihoodRequest(c, x) for c in CONTEXTS for x in CHOICES]


@pytest.mark.parametrize("batch_size", [3, 7, "auto"])
def test_shared_context_scoring_matches_separate(tiny_model_dir: Path,
                                                 batch_size: int | str) -> None:
    reqs = mc_requests()
    separate = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)  # no sharing
    lm = HFModel(str(tiny_model_dir), {}, batch_size=batch_size)  # type: ignore[arg-type]
    calls: list[bool] = []
    forward = lm._model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:  # a 4D mask: the trie way (hf.tree)
        mask = kwargs.get("attention_mask")
        calls.append(mask is not None and mask.dim() == 4)
        return forward(*args, **kwargs)

    lm._model.forward = spy
    shared = lm.loglikelihood(reqs)
    assert any(calls), "the shared-context path was not used"
    for s, r in zip(shared, separate, strict=True):
        assert s.logprob == pytest.approx(r.logprob, rel=1e-6, abs=1e-5)  # float rounding
        assert (s.is_greedy, s.n_tokens) == (r.is_greedy, r.n_tokens)


def test_score_batch_shared_equals_plain_directly(tiny_model_dir: Path) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=64)
    rows = [lm._ll_row(r) for r in mc_requests()] + [([1, 2, 3], 0)]  # and one with nothing
    plain = hf_score.score_batch(lm._model, rows, lm._pad, lm._keep_arg, can_share=False)
    shared = hf_score.score_batch(lm._model, rows, lm._pad, lm._keep_arg, can_share=True)
    assert hf_score.plan(rows, [i for i, r in enumerate(rows) if r[1]]) is not None
    assert shared[-1] == plain[-1] == (0.0, True)
    for (a, ga), (b, gb) in zip(shared, plain, strict=True):
        assert a == pytest.approx(b, abs=1e-5) and ga == gb


def test_sharing_skipped_when_it_saves_little() -> None:
    rows = [([1, 2, 3, 4], 1), ([1, 2, 3, 5], 1), ([9, 8, 7, 6, 5, 4, 3, 2], 6)]
    assert hf_score.plan(rows, [0, 1, 2]) is None  # 3 of 12 tokens saved
    mc = [([1, *range(10, 30), t], 1) for t in range(4)]
    groups = hf_score.plan(mc, [0, 1, 2, 3])
    assert groups is not None and list(groups.values()) == [[0, 1, 2, 3]]


def test_shared_scoring_on_done_and_duplicates(tiny_model_dir: Path) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=5)
    reqs = mc_requests()
    reqs = reqs + reqs[:3]  # duplicates are scored once, reported for every index
    seen: dict[int, Any] = {}

    def on_done(i: int, resp: Any) -> None:
        assert i not in seen
        seen[i] = resp

    out = lm.loglikelihood(reqs, on_done=on_done)
    assert sorted(seen) == list(range(len(reqs)))
    assert [seen[i] for i in range(len(reqs))] == out
    assert out[-3:] == out[:3]


def test_shared_scoring_halves_on_oom(tiny_model_dir: Path) -> None:
    reqs = mc_requests()
    expected = HFModel(str(tiny_model_dir), {}, batch_size=1).loglikelihood(reqs)
    lm = HFModel(str(tiny_model_dir), {}, batch_size="auto")
    lm._tree = False  # the two-pass way (a trie packs a batch into one row)
    forward = lm._model.forward

    def limited(*args: Any, **kwargs: Any) -> Any:
        if kwargs["input_ids"].shape[0] > 6:
            raise RuntimeError("CUDA out of memory.")
        return forward(*args, **kwargs)

    lm._model.forward = limited
    got = lm.loglikelihood(reqs)
    assert [g.logprob for g in got] == pytest.approx([e.logprob for e in expected], rel=1e-6,
                                                     abs=1e-5)
    assert lm._auto_size <= 8


def _gen_requests() -> list[GenerateRequest]:
    reqs = []
    for i, p in enumerate(PROMPTS):
        reqs.append(GenerateRequest(p, max_tokens=3 + 3 * i))  # rows end at different steps
        reqs.append(GenerateRequest(p, max_tokens=16, stop=(" ", "e")))
    return reqs


@pytest.mark.parametrize("batch_size", [1, 4, 12])
def test_greedy_loop_matches_model_generate(tiny_model_dir: Path, batch_size: int) -> None:
    reqs = _gen_requests()
    lm = HFModel(str(tiny_model_dir), {}, batch_size=batch_size)
    fast = lm.generate(reqs)
    lm._fast = False  # model.generate with greedy settings and RowStopper
    slow = lm.generate(reqs)
    assert fast == slow
    assert any(r.n_tokens < q.max_tokens for r, q in zip(fast, reqs, strict=True))


@pytest.mark.parametrize("floor,last", [(1, 6), (8, 8), (16, 12)])
def test_greedy_compaction_drops_finished_rows(tiny_model_dir: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               floor: int, last: int) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=12)
    widths: list[int] = []
    forward = lm._model.forward

    def spy(*args: Any, **kwargs: Any) -> Any:
        widths.append(kwargs["input_ids"].shape[0])
        return forward(*args, **kwargs)

    lm._model.forward = spy
    reqs = [GenerateRequest(p, max_tokens=2 if i % 2 else 12) for i, p in enumerate(PROMPTS * 2)]
    monkeypatch.setattr(hf_generate, "COMPACT_FLOOR", floor)
    out = lm.generate(reqs)
    # the short half leaves the batch, but it keeps at least `floor` rows (finished ones fill)
    assert widths[0] == 12 and widths[-1] == last
    monkeypatch.setattr(hf_generate, "COMPACT_FRACTION", 2.0)  # never compact
    assert lm.generate(reqs) == out


def test_batches_are_balanced(tiny_model_dir: Path) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=4)
    sizes: list[int] = []
    lm._run(list(range(9)), lambda x: 1, lambda b: sizes.append(len(b)) or b)
    assert sizes == [3, 3, 3]  # not 4, 4, 1


def test_generate_on_done_per_batch(tiny_model_dir: Path) -> None:
    lm = HFModel(str(tiny_model_dir), {}, batch_size=4)
    reqs = _gen_requests()
    seen: list[int] = []
    out = lm.generate(reqs, on_done=lambda i, r: seen.append(i))
    assert sorted(seen) == list(range(len(reqs))) and len(out) == len(reqs)


def test_collator_keeps_groups_together() -> None:
    items = ["bb1", "a", "ccc22", "bb333", "a4", "ccc5"]
    col = Collator(items, length=len, group_key=lambda s: s.rstrip("0123456789"))
    order = list(next(col.batches(len(items))).indices)
    assert [items[i] for i in order] == ["bb333", "bb1", "ccc22", "ccc5", "a4", "a"]
    plain = Collator(items, length=len)
    assert [items[i] for i in next(plain.batches(6)).indices][:2] == ["ccc22", "bb333"]


def test_cpu_generation_batches_count_prompt_tokens_not_vocabulary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Greedy generation keeps only the last position's logits, so auto batches on CPU are
    sized by padded prompt tokens: a 262,144-token vocabulary (Gemma 3) must not cut them to a
    few rows. Scoring keeps every position's logits and stays capped by their bytes."""
    from harness.models.hf import batching
    from harness.models.hf.batching import CPU_LOGITS_BUDGET, CPU_PROMPT_TOKENS
    from tests.fixtures.tiny_model import build_tiny_model

    vocab = 262_144
    lm = HFModel(str(build_tiny_model(tmp_path, vocab, hidden_size=16)), {}, batch_size="auto")
    lm._tree = False  # one forward row per request, so rows per call are batch rows
    forward = lm._model.forward
    prefills: list[tuple[int, int]] = []  # (rows, padded tokens) of each prompt pass

    def counted(*args: Any, **kwargs: Any) -> Any:
        if kwargs["input_ids"].shape[1] > 1:
            prefills.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    lm._model.forward = counted
    prompts = [f"{p} {i}" for i in range(7) for p in PROMPTS]  # 42 prompts of 2..30 tokens
    reqs = [GenerateRequest(p, 3) for p in prompts]
    got = lm.generate(reqs)
    longest = max(len(lm._prompt_ids(r)) for r in reqs)
    # the old logits budget allowed only 1 GiB / (4 bytes x vocab x longest) rows
    assert CPU_LOGITS_BUDGET // (4 * vocab * longest) < len(reqs)
    assert [rows for rows, _ in prefills] == [len(reqs)]  # one batch of every prompt
    assert longest * len(reqs) <= CPU_PROMPT_TOKENS
    assert got == HFModel(str(tmp_path), {}, batch_size=7).generate(reqs)

    prefills.clear()
    budget = 1 << 26  # a smaller budget: the real one means 1 GiB of logits per batch
    monkeypatch.setattr(batching, "CPU_LOGITS_BUDGET", budget)
    lm.loglikelihood_rolling([RollingRequest(f"{i} {CONTEXTS[2]}") for i in range(12)])
    cap = budget // (4 * vocab * max(width for _, width in prefills))
    assert max(rows for rows, _ in prefills) <= cap < 12
