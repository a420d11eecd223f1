"""The LMentry item generator: determinism, difficulty control, answers checked by an
independent rule (alphabetical order, letter counts, the word before) and the official gold, and
buckets that never hold one official instance twice."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.generators.lmentry import lmentry
from harness.generators.registry import Slot

PROCESSED = "multiprompt/benchmarks/LMentry/LMentry jsons processed"


def draw(data: Path, task: str, d: int, kind: str = "none", n: int = 60) -> list[dict[str, object]]:
    path = str(data / PROCESSED / f"{task}.json")
    return [lmentry(random.Random(s), d, path=path, difficulty_kind=kind, slot=Slot(7, s))
            for s in range(n)]


def test_deterministic(shared_data: Path) -> None:
    assert draw(shared_data, "rhyming_word", 0) == draw(shared_data, "rhyming_word", 0)
    assert len({r["lmentry_id"] for r in draw(shared_data, "rhyming_word", 0)}) == 60


def test_first_alphabetically(shared_data: Path) -> None:
    for r in draw(shared_data, "first_alphabetically", 0):
        assert r["target"] == min(str(r["word1"]), str(r["word2"]), key=str.lower)
        assert r["choices"] == [r["word1"], r["word2"]] and r["difficulty"] == 0


@pytest.mark.parametrize("task,pick", [("more_letters", max), ("less_letters", min)])
def test_letter_counts_and_gap_buckets(shared_data: Path, task: str, pick: object) -> None:
    for gap in (1, 2):
        for r in draw(shared_data, task, gap, "length_gap", n=30):
            w1, w2 = str(r["word1"]), str(r["word2"])
            diff = abs(len(w1) - len(w2))
            assert diff == gap if gap < 2 else diff >= 2  # difficulty really is the gap
            assert r["target"] == pick((w1, w2), key=len)  # type: ignore[operator]
            assert r["difficulty"] == gap


def test_word_before(shared_data: Path) -> None:
    for pos in (1, 2, 3):
        for r in draw(shared_data, "word_before", pos, "position", n=30):
            words = [w.strip(".,!?") for w in str(r["sentence"]).split()]
            i = words.index(str(r["word"]))
            assert (i == pos) if pos < 3 else i >= 3
            assert r["target"] == words[i - 1] and r["target"] in r["choices"]  # type: ignore[operator]
            assert r["word"] not in r["choices"] or r["word"] == r["target"]  # type: ignore[operator]


def test_homophones_distractor_levels(shared_data: Path) -> None:
    for r in draw(shared_data, "homophones", 1, "distractor", n=20):
        assert r["target"] in r["choices"] and r["query"] not in r["choices"]  # type: ignore[operator]


def test_errors(shared_data: Path, tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="not found"):
        lmentry(random.Random(0), 0, path=str(tmp_path / "none.json"), slot=Slot(0, 0))
    (tmp_path / "x.json").write_text('{"examples": []}')
    with pytest.raises(HarnessError, match="no 'examples'"):
        lmentry(random.Random(0), 0, path=str(tmp_path / "x.json"), slot=Slot(0, 0))
    with pytest.raises(ValueError, match="no instance with length_gap = 9"):
        draw(shared_data, "more_letters", 9, "length_gap", n=1)
    with pytest.raises(ValueError, match="difficulty_kind"):
        draw(shared_data, "more_letters", 1, "syllables", n=1)


@pytest.mark.parametrize("task", ["word_before", "less_letters", "rhyming_word"])
def test_a_bucket_never_asks_one_instance_twice(shared_data: Path, task: str) -> None:
    """Drawn with replacement, a bucket of 100 out of word_before's 200 position-1 instances
    repeated some of them: one answer counted as two, an interval too narrow."""
    from harness.items import build_instances
    from harness.tasks.index import TaskIndex

    index = TaskIndex.build([])
    [ref] = index.resolve([f"instructdiv/{task}"])
    spec = index.spec(ref)
    items = build_instances(spec, ref.address, 3, ref.base_dir, 100).items
    by_bucket: dict[str, list[str]] = {}
    for i in items:
        by_bucket.setdefault(i.bucket.label, []).append(str(i.record["lmentry_id"]))
    for ids in by_bucket.values():
        assert len(ids) == 100 and len(set(ids)) == 100
    again = build_instances(spec, ref.address, 3, ref.base_dir, 100).items
    assert [i.record for i in again] == [i.record for i in items]


def test_past_its_pool_a_slot_uses_every_instance_as_often_as_any_other() -> None:
    picks = [Slot(11, i).pick(7) for i in range(30)]
    assert sorted(set(picks[:7])) == list(range(7))
    counts = [picks.count(k) for k in range(7)]
    assert max(counts) - min(counts) <= 1
    assert picks != [Slot(12, i).pick(7) for i in range(30)]  # another bucket, another order
