"""Progress of a run (issue 16): the prompt count is printed before the first model call, and
the time left after the first task (the run's first chunk)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.config import RunConfig
from harness.requests import GenerateRequest, GenerateResponse
from harness.run import progress as progress_mod
from harness.run.evaluate import evaluate
from harness.run.progress import PREFILL_WEIGHT, RunClock, duration, prompt_weight
from harness.tasks.index import TaskIndex
from tests.fixtures.fake_model import FakeLM


def test_duration() -> None:
    assert [duration(s) for s in (0.4, 42, 130, 3900)] == ["0 s", "42 s", "2 min 10 s",
                                                          "1 h 05 min"]


def test_clock_estimates_from_the_prompts_done(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(progress_mod.time, "perf_counter", lambda: now[0])
    clock = RunClock({"t/a": 10, "t/b": 30, "t/c": None})
    assert clock.announce() == ("40 prompts in 3 tasks (and 1 not countable in advance: making "
                                "its items failed; its error follows)")
    now[0] = 105.0  # 10 prompts in 5 s: 30 more take 15 s
    assert clock.task_done("t/a") == "[1/3 tasks, 10/40 prompts, 5 s] about 15 s left (estimated)"
    now[0] = 125.0
    assert clock.task_done("t/b").endswith("model calls done")
    assert clock.task_done("t/c") == "[3/3 tasks, 40/40 prompts, 25 s] model calls done"


def test_the_estimate_weighs_prompts_by_the_tokens_they_generate(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """10 short prompts (4 + 8 units each) took 6 s; 10 long ones (112 + 8) take 10x as long."""
    now = [0.0]
    monkeypatch.setattr(progress_mod.time, "perf_counter", lambda: now[0])
    clock = RunClock({"t/short": 10, "t/long": 10}, {"t/short": 12, "t/long": 120})
    now[0] = 6.0
    assert clock.task_done("t/short").endswith("about 1 min 00 s left (estimated)")


def test_prompt_weight() -> None:
    index = TaskIndex.build([])
    spec = index.spec(index.resolve(["lengthgen/addition_scratchpad"])[0])
    assert prompt_weight(spec) == 115 + PREFILL_WEIGHT




def test_a_failed_task_leaves_the_plan() -> None:
    clock = RunClock({"t/a": 10, "t/b": 30, "t/c": 20})
    clock.task_failed("t/a")
    assert clock.total == 50
    assert clock.task_done("t/b").startswith("[2/3 tasks, 30/50 prompts, ")
    assert clock.task_done("t/c").startswith("[3/3 tasks, 50/50 prompts, ")


class _Recorder(FakeLM):
    """Records, in one list with the progress lines, when the model is called."""

    def __init__(self, log: list[str]) -> None:
        super().__init__(answer=lambda p: "7")
        self.log = log

    def generate(self, requests: Sequence[GenerateRequest]) -> list[GenerateResponse]:
        self.log.append(f"MODEL {len(requests)}")
        return super().generate(requests)


def test_count_before_the_first_call_and_time_left_after_the_first_task(tmp_path: Path) -> None:
    log: list[str] = []
    cfg = RunConfig(model="fake:x", tasks=["lengthgen/addition", "lengthgen/parity"], seed=0,
                    limit_per_bucket=2, output_dir=tmp_path / "out", use_cache=False)
    evaluate(cfg, model=_Recorder(log), on_progress=log.append)
    first_call = next(i for i, line in enumerate(log) if line.startswith("MODEL"))
    announced = [line for line in log[:first_call] if " prompts in 2 tasks" in line]
    assert len(announced) == 1, log
    total = int(announced[0].split()[0].replace(",", ""))
    samples = sum(1 for p in (tmp_path / "out" / "samples").rglob("*.jsonl")
                  for _ in p.open())
    sent = sum(int(line.split()[1]) for line in log if line.startswith("MODEL"))
    assert total == samples == sent
    calls = [i for i, line in enumerate(log) if line.startswith("MODEL")]
    estimate = [i for i, line in enumerate(log) if line.endswith("left (estimated)")]
    assert len(estimate) == 1 and calls[0] < estimate[0] < calls[-1], log
    assert log[-1].endswith("model calls done")
    assert json.loads((tmp_path / "out" / "results.json").read_text())["tasks"]


def test_the_python_api_without_progress_counts_nothing(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    def no_plan(*args: object) -> RunClock:
        raise AssertionError("planned a run that prints no progress")

    monkeypatch.setattr(RunClock, "plan", no_plan)
    cfg = RunConfig(model="fake:x", tasks=["lengthgen/parity"], seed=0, limit_per_bucket=1,
                    output_dir=tmp_path / "out", use_cache=False)
    evaluate(cfg, model=FakeLM(answer=lambda p: "1"))
