"""Issue 45: a task's floor is judged on every template, not its first: each template's own
status stays in its report, the task's (its board row) is pooled over the templates, with the
interval over the items (a repeat of an item under another prompt is not more evidence)."""

from __future__ import annotations

from harness.leaderboard.rows import task_row
from harness.run.results import TaskResult
from harness.scoring.aggregates import not_above
from harness.scoring.floors import pooled_floor, task_status
from harness.scoring.records import SampleRecord
from harness.scoring.report import TemplateReport, task_reports
from harness.spec.buckets import Bucket
from harness.spec.scoring import GapsSpec

BUCKETS = [Bucket(i, str(v), float(v), float(v), True, "ID" if v <= 2 else "OOD")
           for i, v in enumerate([1, 2, 3, 4])]


def _samples(template: str, id_right: int, ood_right: int = 0) -> list[SampleRecord]:
    """20 items a bucket, targets "1" and "0" alternating (baseline: one half); the first
    ``id_right`` of the 40 ID items answered right, the rest "x"; likewise ``ood_right``."""
    out = []
    for b in BUCKETS:
        for i in range(20):
            target = "1" if i % 2 else "0"
            rank = (b.index % 2) * 20 + i
            right = rank < (id_right if b.role == "ID" else ood_right)
            answer = target if right else "x"
            out.append(SampleRecord(
                task="t/x", id=f"{b.label}/{i}", template=template, fewshot_ids=[],
                difficulty=b.lo, bucket=b.label, bucket_index=b.index, role=b.role, prompt="p",
                target=target, output=answer, extracted=answer,
                score=1.0 if right else 0.0))
    return out


def _reports(*right: int) -> list[TemplateReport]:
    samples = [s for t, r in zip("abc", right, strict=False) for s in _samples(t, r)]
    return task_reports(samples, BUCKETS, GapsSpec(), seed=0)


def _result(reports: list[TemplateReport]) -> TaskResult:
    return TaskResult(task="t/x", origin="builtin", spec={}, spec_sha256="0" * 64,
                      difficulty_name="d", n_items=80, dropped_records=0,
                      samples_file="samples/t/x.jsonl", templates=reports)


def test_one_good_template_of_three_does_not_lift_the_task_off_the_floor() -> None:
    """First template 32 of 40 ID answers right, the other two 20 (half: the baseline). Pooled:
    72 of 120 answers, 60%; over 120 samples its lower bound would clear one half, over the 40
    items it does not."""
    reports = _reports(32, 20, 20)
    assert [r.gaps.status for r in reports] == ["measured", "floor", "floor"]
    assert not not_above(72, 120, 0.5) and not_above(24, 40, 0.5)
    status, reason = task_status(reports)
    assert status == "floor"
    assert reason is not None and reason.startswith("ID accuracy over 3 templates 60.0% (40 items")
    assert reason.endswith("at the floor on their own: 2 of 3 (b, c)")
    row = task_row("e", _result(reports), "r.json", None, None)
    assert row.status == "floor" and row.status_reason == reason
    assert row.gap is None and row.retention is None and row.edge is None
    assert row.template == "a" and row.id_accuracy == 0.8  # the first template's numbers stay


def test_a_task_above_its_baseline_pooled_keeps_its_first_templates_status() -> None:
    reports = _reports(36, 32, 34)
    assert pooled_floor(reports) is None
    assert task_status(reports) == ("measured", None)
    row = task_row("e", _result(reports), "r.json", None, None)
    assert row.status == "measured" and row.gap is not None


def test_the_first_template_at_the_floor_is_the_tasks_floor_and_one_template_is_its_own() -> None:
    reports = _reports(20, 40, 40)  # pooled 100 of 120: above; the first template: not
    assert pooled_floor(reports) is None
    status, reason = task_status(reports)
    assert status == "floor" and reason == reports[0].gaps.reason
    for right in (20, 32):
        [one] = _reports(right)
        assert pooled_floor([one]) is None
        assert task_status([one]) == (one.gaps.status, one.gaps.reason)
