"""The easy2hard suite end to end: every task on the tiny HF model through the CLI, the SGR
protocol in one run with a scripted model, and the Easy2Hard-Bench example on a local file."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harness.analyses.registry import run_analyses
from harness.answers.extract import last_boxed
from harness.config import RunConfig
from harness.run.evaluate import evaluate
from harness.run.results import read_samples
from harness.spec.buckets import build_buckets
from harness.spec.task import TaskSpec
from tests.fixtures.fake_model import FakeLM

ROOT = Path(__file__).resolve().parents[2]
TASKS = ["easy2hard/ladder_length", "easy2hard/ladder_range", "easy2hard/ladder_sign",
         "easy2hard/math", "easy2hard/math500", "easy2hard/math_sgr"]


def test_suite_on_tiny_model(tiny_model_dir: Path, shared_data: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    r = subprocess.run(
        [sys.executable, "-m", "harness", "eval", "--model", f"hf:{tiny_model_dir}", "--tasks",
         "easy2hard", "--limit-per-bucket", "2", "--seed", "0", "--output-dir", str(out),
         "--batch-size", "8"],
        capture_output=True, text=True, timeout=900, env={**os.environ, "COLUMNS": "120"})
    assert r.returncode == 0, r.stderr
    res = json.loads((out / "results.json").read_text())
    assert [t["task"] for t in res["tasks"]] == TASKS
    n_expected = {"easy2hard/math": 10, "easy2hard/math500": 10, "easy2hard/math_sgr": 12}
    for t in res["tasks"]:
        samples = read_samples(out / t["samples_file"])
        assert len(samples) == n_expected.get(t["task"], 20), t["task"]
        spec = TaskSpec.model_validate(t["spec"])
        assert spec.card is not None and spec.citations and spec.description
        again = run_analyses(samples, build_buckets(spec.buckets, spec.roles), spec.analyses, 0)
        assert [a.model_dump(mode="json") for a in again] == t["analyses"]
    by_task = {t["task"]: t for t in res["tasks"]}
    assert [a["name"] for a in by_task["easy2hard/math_sgr"]["analyses"]] == ["sgr"]
    cc = by_task["easy2hard/ladder_range"]["analyses"][0]
    assert cc["name"] == "critical_complexity" and len(cc["details"]["levels"]) == 5
    sgr_samples = read_samples(out / by_task["easy2hard/math_sgr"]["samples_file"])
    assert sorted({s.condition for s in sgr_samples}) == ["easy", "hard", "none"]


def load(path: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in path.read_text().splitlines()]


def test_sgr_protocol_in_one_run(shared_data: Path, tmp_path: Path) -> None:
    """A scripted model that solves hard problems with hard exemplars, never without any, and
    with easy exemplars exactly when the problem text has an even length: SGR must equal the
    share of even-length problems, and each condition's exemplars come from its own pool."""
    math_dir = shared_data / "math"
    train_level = {r["problem"]: int(r["level"][-1]) for r in load(math_dir / "train.jsonl")
                   if r["level"] != "Level ?"}
    answer = {r["problem"]: last_boxed(r["solution"]) for r in load(math_dir / "test.jsonl")}

    def solve(prompt: str) -> str:
        *shots, question = re.split(r"(?:^|\n\n)Problem: ", prompt)[1:]
        problem = question.rsplit("\nSolution:", 1)[0]
        levels = {train_level[s.split("\nSolution: ", 1)[0]] for s in shots}
        right = bool(levels) and (levels <= {4, 5} or len(problem) % 2 == 0)
        return f" So the answer is $\\boxed{{{answer[problem] if right else 'nope'}}}$."

    cfg = RunConfig.model_validate(dict(model="fake:x", tasks=["easy2hard/math_sgr"], seed=0,
                                        limit_per_bucket=8, output_dir=tmp_path / "run"))
    res = evaluate(cfg, model=FakeLM(solve))
    samples = read_samples(cfg.output_dir / res.tasks[0].samples_file)
    train_ids = {f"fs:{r['id']}": int(r["level"][-1]) for r in load(math_dir / "train.jsonl")
                 if r["level"] != "Level ?"}
    for s in samples:
        assert s.difficulty in (4, 5)
        shots = {train_ids[f] for f in s.fewshot_ids}
        assert shots <= {"easy": {1, 2, 3}, "hard": {4, 5}, "none": set()}[s.condition]
        assert len(s.fewshot_ids) == (0 if s.condition == "none" else 1)
    problems = {s.id: s.prompt.rsplit("Problem: ", 1)[1].rsplit("\nSolution:", 1)[0]
                for s in samples}
    even = sum(len(p) % 2 == 0 for p in problems.values()) / len(problems)
    (sgr,) = res.tasks[0].analyses
    assert sgr.n == 16 and sgr.value == pytest.approx(even)
    assert sgr.details["accuracy"] == {"easy": pytest.approx(even), "hard": 1.0, "none": 0.0}
    assert sgr.ci_low is not None and sgr.ci_low <= sgr.value <= (sgr.ci_high or 0)


def grid_theta(ratings: list[float], right: list[bool], scale: float) -> float:
    """Brute-force maximum of the 1PL log-likelihood on a fine grid (independent of the fit)."""
    def loglik(theta: float) -> float:
        total = 0.0
        for d, y in zip(ratings, right, strict=True):
            p = 1 / (1 + math.exp(-scale * (theta - d)))
            total += math.log(p if y else 1 - p)
        return total

    return max((i / 10000 for i in range(-10000, 20001)), key=loglik)


def test_easy2hard_bench_example_on_a_local_file(tmp_path: Path) -> None:
    ratings = [((i * 37) % 50) / 50 + 0.01 for i in range(50)]
    data = tmp_path / "e2h"
    data.mkdir()
    (data / "e2h_amc.jsonl").write_text("".join(
        json.dumps({"problem": f"What is {i} + 1?", "answer": str(i + 1), "rating": r}) + "\n"
        for i, r in enumerate(ratings)))
    # right on easy items, plus a few noisy misses / hits so θ is finite
    right = {f"What is {i} + 1?": (r < 0.5) != (i % 7 == 0) for i, r in enumerate(ratings)}

    def solve(prompt: str) -> str:
        q = prompt.rsplit("Problem: ", 1)[1].split("\n", 1)[0]
        n = int(q.split()[2])
        return f" \\boxed{{{n + 1 if right[q] else n + 2}}}"

    os.environ["E2H_DATA"] = str(data)
    try:
        cfg = RunConfig.model_validate(dict(
            model="fake:x", tasks=["e2h/e2h_amc"], seed=0, limit_per_bucket=None,
            output_dir=tmp_path / "run", include_paths=[ROOT / "examples" / "tasks"]))
        res = evaluate(cfg, model=FakeLM(solve))
    finally:
        del os.environ["E2H_DATA"]
    (task,) = res.tasks
    (rep,) = task.templates
    assert [(b.bucket, b.n) for b in rep.buckets] == [(f"q{i}", 10) for i in range(1, 6)]
    samples = read_samples(cfg.output_dir / task.samples_file)
    assert all(s.fewshot_ids and s.score == float(right[s.prompt.rsplit("Problem: ", 1)[1]
                                                         .split("\n", 1)[0]]) for s in samples)
    (ability,) = task.analyses
    want = grid_theta([s.difficulty for s in samples], [s.score == 1.0 for s in samples], 10.0)
    assert ability.name == "ability_1pl" and ability.value == pytest.approx(want, abs=2e-4)
    assert ability.ci_low is not None and ability.ci_low < ability.value < (ability.ci_high or 0)
