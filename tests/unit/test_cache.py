"""The response cache: keys, persistence of each response as it completes, and the CLI."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.lm import OnDone
from harness.models.cache import CachedLM, ResponseCache, model_key
from harness.requests import GenerateRequest, GenerateResponse, LoglikelihoodRequest
from harness.testing import ScriptedLM
from tests.fixtures.fake_model import FakeLM
from tests.helpers import run_harness


class Counting(ScriptedLM):
    """A scripted model that counts the requests it is sent, and can crash after k of them."""

    def __init__(self, crash_after: int | None = None, **kw: object) -> None:
        super().__init__(lambda p: p.upper(), **kw)  # type: ignore[arg-type]
        self.sent = 0
        self.crash_after = crash_after

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        out = []
        for i, r in enumerate(requests):
            if self.crash_after is not None and self.sent >= self.crash_after:
                raise RuntimeError("killed")
            self.sent += 1
            out.append(GenerateResponse(r.prompt.upper(), len(r.prompt)))
            if on_done:
                on_done(i, out[-1])
        return out


def reqs(*prompts: str, temperature: float = 0.0) -> list[GenerateRequest]:
    return [GenerateRequest(p, 8, ("\n",), temperature) for p in prompts]


def test_second_call_is_answered_from_disk(tmp_path: Path) -> None:
    first = CachedLM(Counting(), ResponseCache(tmp_path))
    out1 = first.generate(reqs("a", "b", "c"))
    first.cache.close()
    model = Counting()
    again = CachedLM(model, ResponseCache(tmp_path))  # a new process would see the same file
    seen: list[int] = []
    out2 = again.generate(reqs("c", "a", "d"), on_done=lambda i, r: seen.append(i))
    assert [r.text for r in out2] == ["C", "A", "D"] and out1[0].text == "A"
    assert model.sent == 1 and (again.stats.hits, again.stats.misses) == (2, 1)
    assert sorted(seen) == [0, 1, 2]


def test_greedy_duplicates_are_sent_once_but_samples_are_not(tmp_path: Path) -> None:
    model = Counting()
    cached = CachedLM(model, ResponseCache(tmp_path))
    assert [r.text for r in cached.generate(reqs("x", "x", "y"))] == ["X", "X", "Y"]
    assert model.sent == 2
    cached.generate(reqs("s", "s", "s", temperature=0.7))
    assert model.sent == 5  # three samples of one prompt are three requests
    cached.generate(reqs("s", "s", "s", "s", temperature=0.7))
    assert model.sent == 6  # a re-run gets the same three back, only the fourth is new


def test_each_response_is_stored_as_it_completes(tmp_path: Path) -> None:
    crashing = CachedLM(Counting(crash_after=3), ResponseCache(tmp_path))
    with pytest.raises(RuntimeError):
        crashing.generate(reqs(*"abcdefg"))
    rows = sqlite3.connect(tmp_path / "responses.sqlite").execute(
        "SELECT COUNT(*) FROM responses").fetchone()[0]
    assert rows == 3
    model = Counting()
    resumed = CachedLM(model, ResponseCache(tmp_path))
    assert "".join(r.text for r in resumed.generate(reqs(*"abcdefg"))) == "ABCDEFG"
    assert model.sent == 4 and resumed.stats.hits == 3


def test_key_covers_model_identity_but_not_operational_args(tmp_path: Path) -> None:
    a = ScriptedLM(name="m")
    base = model_key(a.identity)
    ident = a.identity
    assert model_key(ident.model_copy(update={"dtype": "float16"})) != base
    assert model_key(ident.model_copy(update={"weights_sha256": "ab"})) != base
    assert model_key(ident.model_copy(update={"args": {"max_concurrency": "64"}})) == base
    assert model_key(ident.model_copy(update={"args": {"max_length": "64"}})) != base


def test_loglikelihood_through_a_backend_without_on_done(tmp_path: Path) -> None:
    model = FakeLM(answer=lambda p: "", score=lambda c, x: -float(len(c) + len(x)))
    cached = CachedLM(model, ResponseCache(tmp_path))
    requests = [LoglikelihoodRequest(f"ctx{i}", " x") for i in range(300)]
    seen: list[int] = []
    out = cached.loglikelihood(requests, on_done=lambda i, r: seen.append(i))
    assert [r.logprob for r in out] == [-float(len(f"ctx{i}") + 2) for i in range(300)]
    assert sorted(seen) == list(range(300))
    n = len(model.calls)
    assert [r.logprob for r in cached.loglikelihood(requests)] == [r.logprob for r in out]
    assert len(model.calls) == n


def test_unusable_cache_dir_is_one_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(HarnessError, match="--cache-dir"):
        ResponseCache(blocker)


def test_eval_resumes_from_cache_and_cache_commands(tmp_path: Path, tiny_model_dir: Path) -> None:
    cache = tmp_path / "cache"
    args = ["eval", "--model", f"hf:{tiny_model_dir}", "--tasks", "lengthgen/addition",
            "--limit-per-bucket", "2", "--cache-dir", str(cache)]
    r1 = run_harness(*args, "--output-dir", str(tmp_path / "a"))
    assert r1.returncode == 0, r1.stderr
    assert "0 answered from" in r1.stderr
    r2 = run_harness(*args, "--output-dir", str(tmp_path / "b"))
    assert r2.returncode == 0 and "0 sent to the model" in r2.stderr
    assert (tmp_path / "a/samples").is_dir()
    r3 = run_harness(*args, "--output-dir", str(tmp_path / "c"), "--no-cache")
    assert "response cache" not in r3.stderr
    info = run_harness("cache", "info", "--cache-dir", str(cache))
    assert info.returncode == 0 and f"hf:{tiny_model_dir}  generate  22" in info.stdout
    clear = run_harness("cache", "clear", "--cache-dir", str(cache))
    assert clear.returncode == 0 and "deleted" in clear.stdout
    assert "empty" in run_harness("cache", "info", "--cache-dir", str(cache)).stdout
    bad = run_harness(*args, "--output-dir", str(tmp_path / "d"),
                      "--cache-dir", str(tmp_path / "a/results.json"))
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "--cache-dir" in bad.stderr
