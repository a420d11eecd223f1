"""``harness eval --target-ci`` (issue 25): rounds that stop once the intervals are tight, the
finished folder equal to a plain run at the last limit, and the stopping rule's coverage
computed exactly (``pytest -s`` prints the table that docs/statistics.md shows)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.leaderboard.precision import _reaches
from harness.run.evaluate import evaluate
from harness.run.results import Results
from harness.run.rounds import FIRST_ROUND, run_rounds, widest
from harness.scoring.intervals import reach
from harness.scoring.stats import wilson_interval
from harness.tasks.index import TaskIndex
from harness.testing import ScriptedLM, oracle_model

TASK = "lengthgen/copy"
DROP = ("timings", "cache", "harness", "environment")  # differ between any two runs


def _sizes(buckets: int, cap: int = 1000) -> list[int]:
    out, limit = [], FIRST_ROUND
    while True:
        out.append(buckets * limit)
        if limit >= cap:
            return out
        limit = min(2 * limit, cap)


def coverage(p: float, sizes: list[int], target: float) -> tuple[float, float]:
    """Exact coverage of the Wilson interval reported when the rounds stop (and the expected
    number of items then): the counts of successive rounds as a Markov chain of binomial
    increments, summed over every path."""
    alive = np.ones(1)  # P(count = x and not stopped yet)
    prev, cov, items = 0, 0.0, 0.0
    for i, n in enumerate(sizes):
        dist = np.convolve(alive, binom.pmf(np.arange(n - prev + 1), n - prev, p))
        alive = np.zeros_like(dist)
        for x, pr in enumerate(dist):
            lo, hi = wilson_interval(x, n)
            h = reach(x / n, lo, hi)
            assert h is not None
            if i == len(sizes) - 1 or h <= target:
                cov += pr * (lo <= p <= hi)
                items += pr * n
            else:
                alive[x] = pr
        prev = n
    return cov, items


GRID = (0.0, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.95, 0.98, 0.99, 1.0)


@pytest.mark.parametrize("target", [0.10, 0.05])
@pytest.mark.parametrize("buckets", [1, 3])
def test_the_stopping_rule_keeps_coverage(target: float, buckets: int) -> None:
    sizes = _sizes(buckets)
    cells = {p: coverage(p, sizes, target) for p in GRID}
    print(f"\n+-{100 * target:g} pts, {buckets} bucket(s) per role: "
          + "  ".join(f"p={p}: {100 * c:.1f}% at {n:.0f}" for p, (c, n) in cells.items()))
    assert min(c for c, _ in cells.values()) >= 0.935
    # the point of the rounds: a role at 0% or 100% stops before the worst case (p = .5)
    assert cells[0.0][1] < cells[0.5][1] and cells[1.0][0] == pytest.approx(1.0)


def test_reach_is_the_farther_end_of_the_interval() -> None:
    assert reach(0.9, 0.8, 0.95) == pytest.approx(0.1)
    assert reach(0.1, 0.02, 0.3) == pytest.approx(0.2)
    assert reach(None, None, None) is None and reach(0.5, None, 0.6) is None


def _rounds(tmp_path: Path, answer_right: bool, target: float, cap: int | None,
            overwrite: bool = False) -> tuple[Results, list[int], RunConfig, ScriptedLM]:
    index = TaskIndex.build([])
    [ref] = index.resolve([TASK])
    cfg = RunConfig(model="scripted:r", tasks=[TASK], seed=1, limit_per_bucket=cap,
                    output_dir=tmp_path / "run")
    oracle = oracle_model(index.spec(ref), ref, cfg)
    model = ScriptedLM(lambda p: oracle._text(p) if answer_right or len(p) % 2 else "no",
                       name="r")
    limits: list[int] = []

    def one(c: RunConfig, replace: bool) -> Results:
        limits.append(c.limit_per_bucket or 0)
        return evaluate(c, model=model, overwrite=replace)

    res, _ = run_rounds(cfg, target, FIRST_ROUND, one, overwrite)
    return res, limits, cfg, model


def _plain(res: Results) -> dict[str, object]:
    return {k: v for k, v in res.model_dump(mode="json").items() if k not in DROP}


def test_rounds_stop_at_the_target_and_equal_a_plain_run(tmp_path: Path) -> None:
    res, limits, cfg, model = _rounds(tmp_path, True, 0.05, None)
    assert limits == [10, 20, 40][: len(limits)] and len(limits) >= 2
    assert widest(res)[0] <= 0.05  # stopped because the target was met ...
    # the board judges the same run by the same reach (scoring.intervals.reach)
    assert max(_reaches(res.tasks[0]).values()) == widest(res)[0]
    info = json.loads((cfg.output_dir / "rounds.json").read_text())
    assert info["stopped"] == "target met" and [r["limit"] for r in info["rounds"]] == limits
    assert info["rounds"][-2]["reach"] > 0.05  # ... and not a round earlier
    plain = evaluate(cfg.model_copy(update={"limit_per_bucket": limits[-1],
                                            "output_dir": tmp_path / "plain"}), model=model)
    assert res.run.limit_per_bucket == limits[-1]
    assert _plain(res) == _plain(plain.model_copy(update={"run": res.run}))
    assert (cfg.output_dir / res.tasks[0].samples_file).read_bytes() == (
        tmp_path / "plain" / plain.tasks[0].samples_file).read_bytes()
    # a rerun of the same command resumes in its own folder, without --overwrite
    _rounds(tmp_path, True, 0.05, None)


def test_a_cap_ends_the_rounds_and_says_so(tmp_path: Path) -> None:
    res, limits, cfg, _ = _rounds(tmp_path, False, 0.01, 25)
    assert limits == [10, 20, 25] and res.run.limit_per_bucket == 25
    assert json.loads((cfg.output_dir / "rounds.json").read_text())["stopped"] == "cap reached"


@pytest.mark.parametrize("target", [0.0, 0.5, -1.0])
def test_a_target_outside_the_range_is_one_line(tmp_path: Path, target: float) -> None:
    with pytest.raises(HarnessError, match=r"--target-ci must be in \(0, 0.5\)"):
        _rounds(tmp_path, True, target, None)
    assert not (tmp_path / "run").exists()  # refused before anything ran


def test_the_horizon_search_runs_once_after_the_rounds(tmp_path: Path) -> None:
    """--target-ci with --horizon: the rounds run without the search, then the final limit
    runs once more with it (its fixed answers all from the cache)."""
    cfg = RunConfig(model="scripted:r", tasks=["lengthgen/copy"], seed=0, limit_per_bucket=40,
                    output_dir=tmp_path / "run", horizon=True, horizon_items=20)
    seen: list[tuple[int, bool]] = []
    model = ScriptedLM(" x", name="r")

    def one(c: RunConfig, replace: bool) -> Results:
        seen.append((c.limit_per_bucket or 0, c.horizon))
        return evaluate(c, model=model, overwrite=replace)

    res, rounds = run_rounds(cfg, 0.2, FIRST_ROUND, one)
    assert [h for _, h in seen] == [False] * len(rounds) + [True]
    assert seen[-1][0] == rounds[-1].limit and res.run.horizon
    assert res.tasks[0].horizons  # the floor model's search: no number, but its record


def test_the_matched_control_lets_the_rounds_stop(tmp_path: Path) -> None:
    """The matched-exemplar control answers no ID item: its empty ID role must not keep the
    rounds going to the cap (issue 34 found every --matched-control run capped)."""
    task = "lengthgen/addition"  # 3 exemplars
    index = TaskIndex.build([])
    [ref] = index.resolve([task])
    cfg = RunConfig(model="scripted:r", tasks=[task], seed=1, limit_per_bucket=40,
                    matched_control=True, output_dir=tmp_path / "run")
    oracle = oracle_model(index.spec(ref), ref, cfg)
    # about half right: a measurable gap, so the control runs (at the ceiling it would not)
    model = ScriptedLM(lambda p: oracle._text(p) if len(p) % 2 else "no", name="r")
    limits: list[int] = []

    def one(c: RunConfig, replace: bool) -> Results:
        limits.append(c.limit_per_bucket or 0)
        return evaluate(c, model=model, overwrite=replace)

    res, rounds = run_rounds(cfg, 0.2, FIRST_ROUND, one)
    conds = {tpl.condition for tpl in res.tasks[0].templates}
    assert len(conds) == 2  # the task's own exemplars and the matched control both ran
    assert any(r.n == 0 for tpl in res.tasks[0].templates for r in tpl.roles)
    assert limits == [FIRST_ROUND] and rounds[0].reach <= 0.2
