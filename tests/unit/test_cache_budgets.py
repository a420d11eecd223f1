"""The response cache under a changed budget: a greedy answer that stopped by itself is served
to the same request under any budget it fits in; an answer its budget cut, a sampled one, and a
damaged index entry never are."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from harness.lm import OnDone
from harness.models.cache import CachedLM, ResponseCache, model_key
from harness.requests import GenerateRequest, GenerateResponse
from harness.testing import ScriptedLM

# answers of 2, 5 and 12 words (a word is a token of ScriptedLM)
ANSWERS = {"a": "one two", "b": "one two three four five",
           "c": " ".join(f"w{i}" for i in range(12))}


class Asked(ScriptedLM):
    """ScriptedLM that records the requests it is sent."""

    def __init__(self) -> None:
        super().__init__(ANSWERS)
        self.sent: list[GenerateRequest] = []

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        self.sent += list(requests)
        return super().generate(requests, on_done)


def ask(cache_dir: Path, budget: int, prompts: str = "abc", temperature: float = 0.0
        ) -> tuple[list[GenerateResponse], Asked, CachedLM]:
    model = Asked()
    lm = CachedLM(model, ResponseCache(cache_dir))
    out = lm.generate([GenerateRequest(p, budget, ("\n",), temperature) for p in prompts])
    lm.cache.close()
    return out, model, lm


def test_a_larger_budget_asks_only_the_answers_the_smaller_one_cut(tmp_path: Path) -> None:
    small, _, _ = ask(tmp_path, 4)
    assert [r.n_tokens for r in small] == [2, 4, 4]  # b and c stopped on the budget
    out, model, lm = ask(tmp_path, 16)
    assert [r.prompt for r in model.sent] == ["b", "c"]
    assert lm.stats.regrown == 1 and (lm.stats.hits, lm.stats.misses) == (1, 2)
    fresh, _, _ = ask(tmp_path / "fresh", 16)
    assert out == fresh


def test_a_smaller_budget_takes_what_fits_in_it(tmp_path: Path) -> None:
    ask(tmp_path, 16)  # every answer ended: 2, 5 and 12 tokens
    out, model, lm = ask(tmp_path, 6)
    assert [r.prompt for r in model.sent] == ["c"]  # 12 tokens do not fit in 6
    assert lm.stats.regrown == 2
    assert out == ask(tmp_path / "fresh", 6)[0]
    # 5 tokens under a budget of 5 stop on it: the stored answer is not served as ended
    _, model, _ = ask(tmp_path, 5, "b")
    assert [r.prompt for r in model.sent] == ["b"]


def test_sampled_answers_and_other_stop_strings_are_not_shared(tmp_path: Path) -> None:
    ask(tmp_path, 16, temperature=0.7)
    _, model, _ = ask(tmp_path, 32, temperature=0.7)
    assert len(model.sent) == 3
    ask(tmp_path / "g", 16)
    lm = CachedLM(Asked(), ResponseCache(tmp_path / "g"))
    lm.generate([GenerateRequest("a", 32, ("\n\n",))])
    assert lm.stats.regrown == 0 and lm.stats.misses == 1


def test_a_cache_written_before_the_index_is_indexed_when_opened(tmp_path: Path) -> None:
    ask(tmp_path, 4)
    db = sqlite3.connect(tmp_path / "responses.sqlite")
    db.execute("DROP TABLE ended")
    db.commit()
    db.close()
    _, model, lm = ask(tmp_path, 16)
    assert lm.stats.regrown == 1 and [r.prompt for r in model.sent] == ["b", "c"]


def test_a_damaged_index_entry_never_serves_another_requests_answer(tmp_path: Path) -> None:
    ask(tmp_path, 16, "b")
    db = sqlite3.connect(tmp_path / "responses.sqlite")
    (key,) = db.execute("SELECT key FROM responses").fetchone()
    mkey = model_key(Asked().identity)
    request = json.dumps({"max_tokens": 16, "method": "generate", "prompt": "a", "stop": ["\n"],
                          "temperature": 0.0}, sort_keys=True, separators=(",", ":"))
    from harness.models.cache_ended import family_key
    fam = family_key(mkey, request)
    assert fam is not None
    db.execute("INSERT INTO ended VALUES (?, ?, ?)", (fam[0], 1, key))  # a's family → b's row
    db.commit()
    db.close()
    out, model, lm = ask(tmp_path, 16, "a")
    assert out[0].text == "one two" and [r.prompt for r in model.sent] == ["a"]
    assert lm.stats.regrown == 0


class Local(Asked):
    """A model with a context of 24 words, which a local backend fills by cutting the prompt
    from the left to make room for the budget."""

    def context_length(self) -> int | None:
        return 24

    def count_tokens(self, text: str) -> int | None:
        return len(text.split())


def test_an_answer_is_not_shared_where_a_budget_would_cut_the_prompt(tmp_path: Path) -> None:
    """A prompt of 10 words: under a budget of 8 it fits whole (10 + 1 + 8 <= 24); under 16 the
    backend would cut it, so the answer stored under 8 is not that request's answer."""
    prompt = " ".join(["w"] * 9) + " a"
    lm = CachedLM(Local(), ResponseCache(tmp_path))
    lm.generate([GenerateRequest(prompt, 8, ("\n",))])
    assert lm.stats.misses == 1
    model = Local()
    again = CachedLM(model, ResponseCache(tmp_path))
    again.generate([GenerateRequest(prompt, 12, ("\n",)), GenerateRequest(prompt, 16, ("\n",))])
    assert again.stats.regrown == 1 and [r.max_tokens for r in model.sent] == [16]


def test_an_index_of_another_shape_is_built_again(tmp_path: Path) -> None:
    ask(tmp_path, 4)
    db = sqlite3.connect(tmp_path / "responses.sqlite")
    db.execute("DROP TABLE ended")
    db.execute("CREATE TABLE ended (family TEXT, key TEXT)")
    db.commit()
    db.close()
    _, model, lm = ask(tmp_path, 16)
    assert lm.stats.regrown == 1 and [r.prompt for r in model.sent] == ["b", "c"]


def test_a_count_the_server_did_not_report_is_not_an_ended_answer() -> None:
    from harness.models.cache_ended import ended_tokens

    req = json.dumps({"max_tokens": 8})
    assert ended_tokens(req, json.dumps({"text": "a b c", "n_tokens": 0})) is None
    assert ended_tokens(req, json.dumps({"text": "", "n_tokens": 0})) == 0
    assert ended_tokens(req, json.dumps({"text": "a b c", "n_tokens": 3})) == 3
    assert ended_tokens(req, json.dumps({"text": "a b c", "n_tokens": 8})) is None
    assert ended_tokens(req, json.dumps({"text": "a b c", "n_tokens": -1})) is None
