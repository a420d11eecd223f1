"""Items of the official LMentry task files (Efrat et al. 2023), as used by Mizrahi et al. 2024.

LMentry ships each task as one JSON object whose ``examples`` map an instance id to its fields
(``word1``, ``word2``, ``query``, ``sentence``, ``word``, ``gold``, ``more_info``). The harness's
file sources read one record per line, so these items come through a generator instead: every item
is drawn (seeded, without replacement: ``registry.Slot``) from the instances whose difficulty
equals the requested value, so a bucket repeats none while it asks for no more than there
are. Fields added to each record:

- ``choices``: the candidate answers (the two words, or the words of the sentence other than the
  query word for ``word_before``), for multiple-choice scoring;
- ``target``: the gold answer; ``lmentry_id``: the official instance id;
- the difficulty field named by ``difficulty`` (see ``DIFFICULTIES``).
"""

from __future__ import annotations

import json
import os
import random
from collections.abc import Callable, Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

from harness.errors import HarnessError
from harness.generators.registry import Slot, generator


def _length_gap(ex: Mapping[str, Any]) -> int:
    return min(abs(len(str(ex["word1"])) - len(str(ex["word2"]))), 2)


def _position(ex: Mapping[str, Any]) -> int:
    return min(int(ex["more_info"]["query_position_in_sentence"]), 3)


def _distractor(ex: Mapping[str, Any]) -> int:
    return {"easy": 0, "semantic": 1}[str(ex["more_info"]["distractor_type"])]


# difficulty name -> (what it means, function of an official instance)
DIFFICULTIES: dict[str, tuple[str, Callable[[Mapping[str, Any]], int]]] = {
    "none": ("constant 0 (one bucket)", lambda ex: 0),
    "length_gap": ("|len(word1) - len(word2)| in letters, 2 = 2 or more (1 is hardest)",
                   _length_gap),
    "position": ("0-based position of the query word in the sentence, 3 = 3 or more", _position),
    "distractor": ("distractor type: 0 easy, 1 semantic", _distractor),
}


@lru_cache(maxsize=32)
def _load(path: str) -> tuple[tuple[str, dict[str, Any]], ...]:
    from harness.sources.files import exists, read_data, shown

    p = Path(os.path.expandvars(os.path.expanduser(path)))
    if not exists(p):
        raise HarnessError(f"source.params.path: LMentry file not found: {shown(p)} "
                           "(set GENHARNESS_DATA to the data mirror, or point path at the file)")
    try:
        data = json.loads(read_data(p, "source.params.path"))
    except json.JSONDecodeError as e:
        raise HarnessError(f"source.params.path: cannot read {shown(p)}: {e}") from None
    examples = data.get("examples") if isinstance(data, dict) else None
    if not isinstance(examples, dict) or not examples:
        raise HarnessError(f"source.params.path: {p} has no 'examples' mapping (LMentry format)")
    return tuple((str(k), v) for k, v in examples.items() if isinstance(v, dict))


def choices_for(ex: Mapping[str, Any]) -> list[str]:
    """Candidate answers of an instance: its two words, or for a sentence the distinct words
    other than the query word, in sentence order."""
    if "word1" in ex and "word2" in ex:
        return [str(ex["word1"]), str(ex["word2"])]
    if "sentence" in ex:
        words = [w.strip(".,;:!?\"'") for w in str(ex["sentence"]).split()]
        out: list[str] = []
        for w in words:
            if w and (w != ex.get("word") or w == ex.get("gold")) and w not in out:
                out.append(w)
        return out
    raise ValueError("instance has neither word1/word2 nor sentence")


@generator("lmentry", difficulty="see harness.generators.lmentry.DIFFICULTIES",
           fields=("choices", "target", "lmentry_id"), needs_slot=True)
def lmentry(
    rng: random.Random, difficulty: int, *, path: str, url: str = "", difficulty_kind: str = "none",
    difficulty_field: str = "difficulty", slot: Slot,
) -> dict[str, Any]:
    """One official instance from the LMentry file at ``path`` whose ``difficulty_kind`` value is
    ``difficulty``, the one ``slot`` picks. ``url`` (informational) says where users get the
    file."""
    del url, rng
    if difficulty_kind not in DIFFICULTIES:
        raise ValueError(f"difficulty_kind {difficulty_kind!r} unknown "
                         f"(known: {', '.join(DIFFICULTIES)})")
    measure = DIFFICULTIES[difficulty_kind][1]
    pool = [(k, ex) for k, ex in _load(path) if measure(ex) == difficulty]
    if not pool:
        raise ValueError(f"no instance with {difficulty_kind} = {difficulty} in {path}")
    key, ex = pool[slot.pick(len(pool))]
    rec = {k: v for k, v in ex.items() if k != "more_info"}
    choices = choices_for(ex)
    gold = str(ex["gold"])
    if gold not in choices:
        raise ValueError(f"instance {key}: gold {gold!r} is not among its choices {choices}")
    rec.update({"choices": choices, "target": gold, "lmentry_id": key,
                difficulty_field: difficulty})
    return rec
