"""The LMentry item generator: determinism, difficulty control, and answers checked by an
independent rule (alphabetical order, letter counts, the word before) and the official gold."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.generators.lmentry import lmentry

PROCESSED = "multiprompt/benchmarks/LMentry/LMentry jsons processed"


def draw(data: Path, task: str, d: int, kind: str = "none", n: int = 60) -> list[dict[str, object]]:
    path = str(data / PROCESSED / f"{task}.json")
    return [lmentry(random.Random(s), d, path=path, difficulty_kind=kind) for s in range(n)]


def test_deterministic(shared_data: Path) -> None:
    assert draw(shared_data, "rhyming_word", 0) == draw(shared_data, "rhyming_word", 0)
    assert len({r["lmentry_id"] for r in draw(shared_data, "rhyming_word", 0)}) > 40


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
        lmentry(random.Random(0), 0, path=str(tmp_path / "none.json"))
    (tmp_path / "x.json").write_text('{"examples": []}')
    with pytest.raises(HarnessError, match="no 'examples'"):
        lmentry(random.Random(0), 0, path=str(tmp_path / "x.json"))
    with pytest.raises(ValueError, match="no instance with length_gap = 9"):
        draw(shared_data, "more_letters", 9, "length_gap", n=1)
    with pytest.raises(ValueError, match="difficulty_kind"):
        draw(shared_data, "more_letters", 1, "syllables", n=1)
