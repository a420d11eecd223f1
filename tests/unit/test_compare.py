"""``harness compare``: paired differences, score intervals and McNemar p-values on known pairs;
runs whose items differ compared as independent samples."""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from harness.errors import HarnessError
from harness.leaderboard.paired import compare_runs
from harness.leaderboard.scores import sign_test
from harness.scoring.intervals import diff_interval, exact_limits, proportion
from harness.scoring.records import SampleRecord
from tests.unit.test_leaderboard_fixtures import TaskSpecLite, make_results, record, write_run

TASK = "lengthgen/addition"


def _bucket_pairs(bucket: str, index: int, role: str, both: int, a_only: int, b_only: int,
                  neither: int, start: int = 0) -> tuple[list[SampleRecord], list[SampleRecord]]:
    """Records for A and B with the given 2×2 counts (items numbered from *start*)."""
    sa, sb = [], []
    i = start
    for n, (x, y) in ((both, (1.0, 1.0)), (a_only, (1.0, 0.0)), (b_only, (0.0, 1.0)),
                      (neither, (0.0, 0.0))):
        for _ in range(n):
            sa.append(record(TASK, f"i{i:04d}", x, bucket, index, role))
            sb.append(record(TASK, f"i{i:04d}", y, bucket, index, role))
            i += 1
    return sa, sb


def _two_runs(tmp_path: Path, sa: list[SampleRecord], sb: list[SampleRecord],
              seed_b: int = 0, tasks_b: list[str] | None = None) -> tuple[Path, Path]:
    spec = TaskSpecLite(TASK, [("1", "ID", 1, 1), ("2", "OOD", 1, 1)])
    extra = [TaskSpecLite(t, [("1", "ID", 1, 1)]) for t in (tasks_b or [])]
    a = write_run(tmp_path / "a", make_results("model-a", [spec]), {TASK: sa})
    b = write_run(tmp_path / "b", make_results("model-b", [spec, *extra], seed=seed_b),
                  {TASK: sb})
    return a, b


@pytest.fixture
def known(tmp_path: Path) -> tuple[Path, Path]:
    # bucket 1: b=1, c=6 (exact binomial); bucket 2: b=10, c=25 (chi-square, continuity)
    a1, b1 = _bucket_pairs("1", 0, "ID", both=10, a_only=1, b_only=6, neither=3)
    a2, b2 = _bucket_pairs("2", 1, "OOD", both=5, a_only=10, b_only=25, neither=10, start=100)
    return _two_runs(tmp_path, a1 + a2, b1 + b2)


def test_known_pairs_give_difference_counts_and_p_values(known: tuple[Path, Path]) -> None:
    c = compare_runs(*known)
    [t] = c.tasks
    b1, b2 = t.buckets
    assert (b1.scope, b1.role, b1.n, b1.n_items) == ("1", "ID", 20, 20)
    assert (b1.acc_a, b1.acc_b, b1.diff) == (0.55, 0.8, 0.25)
    assert (b1.both_right, b1.a_only, b1.b_only, b1.both_wrong) == (10, 1, 6, 3)
    # exact two-sided binomial: 2 · P(X ≤ 1), X ~ Bin(7, 1/2) = 2 · (1 + 7) / 128
    assert b1.test == "exact-binomial" and b1.p_value == pytest.approx(0.125)
    assert (b2.acc_a, b2.acc_b, b2.diff) == (0.3, 0.6, 0.3)
    # chi-square with continuity: (|10 − 25| − 1)² / 35 = 5.6 on 1 df = two normal tails
    z = math.sqrt((abs(10 - 25) - 1) ** 2 / 35)
    expected = 2 * (1 - statistics.NormalDist().cdf(z))
    assert b2.test == "chi2-continuity" and b2.p_value == pytest.approx(expected, abs=1e-9)
    assert b2.p_value == pytest.approx(0.01796, abs=5e-5)
    o = t.overall
    assert (o.n, o.acc_a, o.acc_b) == (70, pytest.approx(26 / 70), pytest.approx(46 / 70))
    assert o.diff == pytest.approx(20 / 70) and (o.a_only, o.b_only) == (11, 31)
    assert o.ci_low < o.diff < o.ci_high
    assert (c.pooled.n, c.pooled.diff, c.pooled.p_value) == (o.n, o.diff, o.p_value)
    # one task: the suite and overall scores are the task's accuracy over every sample
    assert [s.scope for s in c.suites] == ["lengthgen"] and c.overall.n_tasks == 1
    assert c.overall.diff == pytest.approx(20 / 70)
    # one task: the overall interval is the task's own
    assert (c.overall.ci_low, c.overall.ci_high) == pytest.approx((o.ci_low, o.ci_high))
    assert o.p_holm == o.p_value  # one task: Holm changes nothing
    assert c.paired and o.paired and all(b.paired for b in t.buckets)


def test_p_values_match_scipy_when_installed() -> None:
    stats = pytest.importorskip("scipy.stats")
    for b, c in [(0, 3), (1, 6), (4, 9), (12, 12)]:
        assert sign_test(b, c)[0] == pytest.approx(stats.binomtest(b, b + c, 0.5).pvalue)
    for b, c in [(10, 25), (30, 31), (50, 20)]:
        stat = (abs(b - c) - 1) ** 2 / (b + c)
        assert sign_test(b, c)[0] == pytest.approx(stats.chi2.sf(stat, 1))


def test_sign_test_edge_cases() -> None:
    assert sign_test(0, 0) == (1.0, "none")
    assert sign_test(3, 3) == (1.0, "exact-binomial")  # capped at 1
    assert sign_test(0, 5) == (pytest.approx(2 / 32), "exact-binomial")
    assert sign_test(12, 13)[1] == "chi2-continuity"  # 25 discordant pairs: asymptotic


def test_p_values_match_values_computed_with_scipy() -> None:
    # reference values from scipy 1.x: stats.binomtest(b, b + c, 0.5).pvalue and
    # stats.chi2.sf((|b - c| - 1)² / (b + c), 1), computed once outside the test suite
    assert sign_test(4, 9)[0] == pytest.approx(0.266845703125, abs=1e-12)
    assert sign_test(0, 3)[0] == pytest.approx(0.25, abs=1e-12)
    assert sign_test(10, 25)[0] == pytest.approx(0.01796047752607879, rel=1e-9)
    assert sign_test(50, 20)[0] == pytest.approx(0.0005279431738299794, rel=1e-9)
    assert sign_test(30, 31)[0] == pytest.approx(1.0)


def test_paired_interval_matches_normal_approximation(tmp_path: Path) -> None:
    sa, sb = _bucket_pairs("1", 0, "ID", both=100, a_only=30, b_only=70, neither=100)
    a, b = _two_runs(tmp_path, sa, sb)
    stat = compare_runs(a, b).tasks[0].buckets[0]
    d = np.array([y.score - x.score for x, y in zip(sa, sb, strict=True)])
    se = d.std() / math.sqrt(d.size)
    assert stat.diff == pytest.approx(40 / 300)
    assert stat.ci_low == pytest.approx(stat.diff - 1.96 * se, abs=0.012)
    assert stat.ci_high == pytest.approx(stat.diff + 1.96 * se, abs=0.012)


def test_identical_runs_give_zero_and_p_one_but_no_zero_width(tmp_path: Path) -> None:
    """Issue 23: two identical runs of 10 items were [0, 0]; 10 items cannot rule out a
    difference of a few points: ± the exact upper limit of 0 discordant items in 10."""
    sa, _ = _bucket_pairs("1", 0, "ID", both=5, a_only=0, b_only=0, neither=5)
    stat = compare_runs(*_two_runs(tmp_path, sa, sa)).tasks[0].overall
    u = exact_limits(0, 10)[1]
    assert (stat.diff, stat.p_value, stat.test) == (0.0, 1.0, "none")
    assert (stat.ci_low, stat.ci_high) == pytest.approx((-u, u), abs=1e-9)


def test_items_resampled_with_all_their_templates(tmp_path: Path) -> None:
    sa = [record(TASK, f"i{i}", 1.0, template=t) for i in range(4) for t in ("x", "y")]
    sb = [record(TASK, f"i{i}", float(i % 2), template=t) for i in range(4) for t in ("x", "y")]
    stat = compare_runs(*_two_runs(tmp_path, sa, sb)).tasks[0].overall
    # McNemar counts items, not item × template pairs: 2 items where A is better, not 4 pairs
    assert (stat.n, stat.n_items, stat.diff, stat.a_only, stat.b_only) == (8, 4, -0.5, 2, 0)
    assert stat.p_value == pytest.approx(0.5)  # exact: 2 · P(X ≤ 0), X ~ Bin(2, 1/2)


def test_runs_whose_items_differ_are_compared_as_independent_samples(tmp_path: Path) -> None:
    """Issue 23 item 7: pair only identical items (ids, prompts, targets); otherwise Newcombe's
    interval over two independent samples, and the p-value that inverts it."""
    sa, sb = _bucket_pairs("1", 0, "ID", both=3, a_only=1, b_only=1, neither=1)
    other = [r.model_copy(update={"id": r.id + "x"}) for r in sb]
    reprompted = [r.model_copy(update={"prompt": "another seed's prompt"}) for r in sb]
    moved = [r.model_copy(update={"target": "other"}) for r in sb]
    for k, b_side in enumerate((other, reprompted, moved)):
        c = compare_runs(*_two_runs(tmp_path / str(k), sa, b_side, seed_b=k))
        o = c.tasks[0].overall
        assert not c.paired and not o.paired and o.test == "newcombe"
        assert o.a_only is None and o.diff == 0.0 and o.ci_low < 0 < o.ci_high
        pa, pb = proportion([x.score for x in sa]), proportion([x.score for x in b_side])
        assert (o.ci_low, o.ci_high) == pytest.approx(diff_interval(pb, pa), abs=1e-9)
    # the same items at another seed (a seed-free task): paired
    assert compare_runs(*_two_runs(tmp_path / "s", sa, sb, seed_b=1)).paired
    a, b = _two_runs(tmp_path / "4", sa, sb, tasks_b=["lengthgen/copy"])
    with pytest.raises(HarnessError, match="in only one run: lengthgen/copy"):
        compare_runs(a, b)
    assert compare_runs(a, b, tasks=[TASK]).tasks[0].task == TASK
    with pytest.raises(HarnessError, match="--tasks: lengthgen/copy not in both runs"):
        compare_runs(a, b, tasks=["lengthgen/copy"])


def test_cli_json_and_one_line_refusal(known: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = known
    r = subprocess.run([sys.executable, "-m", "harness", "compare", str(a), str(b.parent),
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert data["tasks"][0]["buckets"][0]["p_value"] == pytest.approx(0.125)
    assert data["model_a"] == "hf:model-a" and data["model_b"] == "hf:model-b"
    r = subprocess.run([sys.executable, "-m", "harness", "compare", str(a), str(b)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "lengthgen/addition" in r.stdout and "+25.0" in r.stdout
    sa, sb = _bucket_pairs("1", 0, "ID", both=1, a_only=0, b_only=0, neither=0)
    sb = [x.model_copy(update={"prompt": "q"}) for x in sb]
    x, y = _two_runs(tmp_path / "other", sa, sb, seed_b=3)
    r = subprocess.run([sys.executable, "-m", "harness", "compare", str(x), str(y)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "NOT paired" in r.stdout and "independent samples" in r.stdout
    r = subprocess.run([sys.executable, "-m", "harness", "compare", str(x), str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.count("\n") == 1


def test_pooled_pairs_are_keyed_by_task_too(tmp_path: Path) -> None:
    """Issue 46: two tasks whose items share ids ("4/0" in every generator task) are pooled as
    two items each, never paired across tasks or dropped."""
    other = "lengthgen/copy"
    spec = [TaskSpecLite(t, [("1", "ID", 1, 1), ("2", "OOD", 1, 1)]) for t in (TASK, other)]
    sa1, sb1 = _bucket_pairs("1", 0, "ID", both=4, a_only=3, b_only=0, neither=3)
    sa2 = [r.model_copy(update={"task": other, "score": 1.0 - r.score}) for r in sa1]
    sb2 = [r.model_copy(update={"task": other}) for r in sb1]
    a = write_run(tmp_path / "a", make_results("model-a", spec), {TASK: sa1, other: sa2})
    b = write_run(tmp_path / "b", make_results("model-b", spec), {TASK: sb1, other: sb2})
    c = compare_runs(a, b)
    assert sum(t.overall.n for t in c.tasks) == 20
    assert c.pooled.n == 20 and c.pooled.n_items == 20
    both = [t.overall for t in c.tasks]
    assert c.pooled.a_only == sum(o.a_only for o in both)
    assert c.pooled.b_only == sum(o.b_only for o in both)
