"""``harness eval --replay RUN_DIR``: answers a finished run of the same model holds are reused
for the same requests; nothing else is (another model, another spec, a sampled request)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.lm import ModelIdentity, OnDone
from harness.requests import GenerateRequest, GenerateResponse, LoglikelihoodRequest
from harness.run.evaluate import evaluate
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, oracle_model


class Weighed(ScriptedLM):
    """A scripted model with weights to hash (replay needs the weights' sha256), counting the
    requests that reach it."""

    def __init__(self, *args: Any, sha: str = "a" * 64, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.sha, self.asked = sha, 0

    @property
    def identity(self) -> ModelIdentity:
        return ModelIdentity(backend="scripted", name="w", weights_sha256=self.sha)

    def generate(self, requests: Sequence[GenerateRequest],
                 on_done: OnDone[GenerateResponse] | None = None) -> list[GenerateResponse]:
        self.asked += len(requests)
        return super().generate(requests, on_done)

    def loglikelihood(self, requests: Sequence[LoglikelihoodRequest],
                      on_done: Any = None) -> Any:
        self.asked += len(requests)
        return super().loglikelihood(requests, on_done)


def _run(tmp: Path, name: str, tasks: list[str], model: Weighed, **kw: Any) -> dict[str, Any]:
    cfg = RunConfig(model="scripted:w", tasks=tasks, seed=2, limit_per_bucket=3,
                    use_cache=False, output_dir=tmp / name, **kw)
    evaluate(cfg, model=model)
    data: dict[str, Any] = json.loads((tmp / name / "results.json").read_text())
    return data


@pytest.mark.parametrize("task", ["lengthgen/copy", "instructdiv/first_alphabetically"])
def test_a_replayed_run_asks_the_model_only_for_what_is_new(tmp_path: Path, task: str,
                                                            shared_data: Path) -> None:
    index = TaskIndex.build([])
    [ref] = index.resolve([task])
    probe = RunConfig(model="scripted:w", tasks=[task], seed=2, limit_per_bucket=3,
                      output_dir=tmp_path / "probe")
    oracle = oracle_model(index.spec(ref), ref, probe)
    first = _run(tmp_path, "a", [task], Weighed(oracle._answer, oracle._score))
    again = Weighed("wrong", lambda c, x: 0.0)  # answers differently: replayed answers show
    second = _run(tmp_path, "b", [task], again, replay=[tmp_path / "a"])
    assert again.asked == 0 and second["replay"]["answered"] > 0
    assert second["tasks"][0]["templates"] == first["tasks"][0]["templates"]
    assert "replay" not in second["run"]  # the folders a run read are not recorded


def _short_only(prompt: str) -> str:
    """Copies inputs of at most 8 letters: a measurable gap, so the matched control runs."""
    letters = prompt.rsplit("Input: ", 1)[-1].split("\n")[0]
    return letters if len(letters.split()) <= 8 else "no"


def test_only_new_prompts_reach_the_model_and_other_models_are_refused(tmp_path: Path) -> None:
    first = _run(tmp_path, "a", ["lengthgen/copy"], Weighed(_short_only))
    grown = Weighed(_short_only)
    second = _run(tmp_path, "b", ["lengthgen/copy"], grown, replay=[tmp_path / "a"],
                  matched_control=True)
    n_base = first["tasks"][0]["templates"][0]["n"]
    assert second["replay"]["answered"] == n_base and grown.asked == 3 * 3  # matched OOD only
    with pytest.raises(HarnessError, match="its model is not this run's model"):
        _run(tmp_path, "c", ["lengthgen/copy"], Weighed("x", sha="b" * 64),
             replay=[tmp_path / "a"])
    with pytest.raises(HarnessError, match="cannot read results.json"):
        _run(tmp_path, "d", ["lengthgen/copy"], Weighed("x"), replay=[tmp_path / "nowhere"])


def _words(prompt: str) -> str:
    """Copies every input: as many words (the scripted model's tokens) as letters."""
    return prompt.rsplit("Input: ", 1)[-1].split("\n")[0]


def test_an_answer_that_ended_before_its_budget_replays_under_a_larger_one(
        tmp_path: Path) -> None:
    capped = Weighed(_words)
    first = _run(tmp_path, "a", ["lengthgen/copy"], capped, max_answer_tokens=6)
    lines = (tmp_path / "a" / "samples" / "lengthgen" / "copy.jsonl").read_text().splitlines()
    cut = sum(json.loads(x).get("cut", False) for x in lines)
    assert 0 < cut < len(lines)  # some answers the cap of 6 words cut, some it did not
    grown = Weighed(_words)
    second = _run(tmp_path, "b", ["lengthgen/copy"], grown, replay=[tmp_path / "a"])
    assert grown.asked == cut  # only the cut answers reach the model again
    assert second["replay"]["grown"] == second["replay"]["answered"] == len(lines) - cut
    fresh = _run(tmp_path, "c", ["lengthgen/copy"], Weighed(_words))
    assert second["tasks"][0]["templates"] == fresh["tasks"][0]["templates"]
    assert first["tasks"][0]["templates"] != fresh["tasks"][0]["templates"]


class Counted(Weighed):
    """Counts tokens as words (a run without a counter returns None)."""

    def __init__(self, counts: bool) -> None:
        super().__init__("never asked")
        self.counts = counts

    def count_tokens(self, text: str) -> int | None:
        return len(text.split()) if self.counts else None


@pytest.mark.parametrize("counts", [True, False])
def test_a_run_that_recorded_no_budget_is_judged_by_the_token_counter(counts: bool) -> None:
    from harness.run.replay import UNKNOWN_TOKENS, Held, ReplayLM, ReplayTable, slack

    table = ReplayTable()
    assert (slack(4), slack(40), slack(128)) == (1, 2, 8)
    short, near = " ".join("a" * 3), " ".join("b" * (40 - slack(40)))
    table.generate[("p", ())] = [Held(40, short, None)]
    table.generate[("q", ())] = [Held(40, near, None)]
    inner = Counted(counts)
    lm = ReplayLM(inner, table)

    def ask(prompt: str, budget: int) -> GenerateResponse:
        [res] = lm.generate([GenerateRequest(prompt, budget, ())])
        return res

    assert ask("q", 40) == GenerateResponse(near, 40 if counts else UNKNOWN_TOKENS)
    assert ask("p", 40) == GenerateResponse(short, UNKNOWN_TOKENS)
    assert inner.asked == 0
    grown = ask("p", 80)
    assert (grown.text == short) == counts and lm.grown == int(counts)
    assert ask("q", 80).text == "never asked"  # near its budget: it may have been cut there
