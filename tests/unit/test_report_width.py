"""The per-task tables read well in an 80-column terminal (issue 16): every table title stays on
one line, and no title, header, cell or gap line is broken inside a word.

The tables are built from every built-in task's real names (task, template, condition,
difficulty name, bucket labels) with the widest numbers a run can print.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table

from harness.cli.run_tables import print_results, score_column, table_title
from harness.config import RunConfig
from harness.gaps.builtin import Horizon, IdOodGap, Retention
from harness.gaps.report import GapReport
from harness.items import build_instances
from harness.lm import ModelIdentity
from harness.run.plan import conditions
from harness.run.results import SCHEMA_VERSION, Environment, HarnessInfo, Results, TaskResult
from harness.scoring.aggregates import BucketAggregate, RoleAggregate
from harness.scoring.report import TemplateReport
from harness.tasks.index import TaskIndex

SUITES = ["lengthgen", "compgen", "easy2hard", "instructdiv"]


def _labels(index: TaskIndex, address: str) -> list[tuple[str, str]]:
    """(bucket label, role) of a task; generated tasks give their real buckets."""
    ref = index.resolve([address])[0]
    spec = index.spec(ref)
    try:
        inst = build_instances(spec, ref.address, 0, ref.base_dir, 1)
    except Exception:  # a dataset the test machine cannot read: labels of the same shape
        return [(f"Level {i}", "ID" if i < 3 else "OOD") for i in range(1, 6)]
    return [(b.label, b.role) for b in inst.buckets]


def _template(tpl: str, cond: str, labels: list[tuple[str, str]], wide: bool) -> TemplateReport:
    """Wide: the widest numbers (4-digit n, 100.0, negative gaps); else the narrowest (n=2),
    where a table is narrower than its old title."""
    n, acc, lo, hi = (1000, 1.0, 0.996, 1.0) if wide else (2, 0.0, 0.0, 0.658)
    buckets = [BucketAggregate(bucket=label, index=i, role=role, lo=1.0, hi=1.0,  # type: ignore[arg-type]
                               n=n, correct=acc * n, accuracy=acc, ci_low=lo, ci_high=hi)
               for i, (label, role) in enumerate(labels)]
    m, acc, lo, hi = (10000, 0.5, 0.49, 0.51) if wide else (6, 0.0, 0.0, 0.39)
    roles = [RoleAggregate(role=r, n=m, correct=acc * m, accuracy=acc,  # type: ignore[arg-type]
                           ci_low=lo, ci_high=hi) for r in ("ID", "OOD")]
    gaps = GapReport(
        id_ood=IdOodGap(value=-1.0, ci_low=-1.0, ci_high=-0.995, n_id=10000, n_ood=10000,
                        ),
        retention=Retention(value=10.5, ci_low=10.25, ci_high=12.125, n_id=10000, n_ood=10000),
        horizon=Horizon(threshold=0.5, value=1024.0, factor=128.0, max_id_difficulty=8.0,
                        last_bucket=None),
    )
    return TemplateReport(template=tpl, condition=cond, n=n * len(buckets), buckets=buckets,
                          roles=roles, gaps=gaps)


def _all_builtin_results(wide: bool) -> Results:
    index = TaskIndex.build([])
    tasks = []
    for ref in index.resolve(SUITES):
        spec = index.spec(ref)
        labels = _labels(index, ref.address)
        reports = [_template(t.id, c.id, labels, wide) for t in spec.templates
                   for c in conditions(spec)]
        tasks.append(TaskResult(
            task=ref.address, origin="builtin", spec=spec.model_dump(mode="json"),
            spec_sha256="a" * 64,
            difficulty_name=spec.difficulty_name, n_items=reports[0].n, dropped_records=0,
            samples_file=f"samples/{ref.address}.jsonl", templates=reports))
    return Results(
        schema_version=SCHEMA_VERSION,
        harness=HarnessInfo(version="0.1.0", git_commit=None, git_dirty=None),
        run=RunConfig(model="hf:smollm2-135m", tasks=SUITES, seed=0, limit_per_bucket=1000,
                      output_dir=Path("x")),
        model=ModelIdentity(backend="hf", name="smollm2-135m", path="p", revision=None,
                            weights_sha256=None, dtype="float32", device="cpu"),
        environment=Environment(python="3.11", platform="Linux", libraries={}),
        tasks=tasks, timings={},
    )


@pytest.fixture(scope="module", params=["narrow numbers", "wide numbers"])
def results(request: pytest.FixtureRequest) -> Results:
    return _all_builtin_results(request.param == "wide numbers")


def _render(results: Results, width: int) -> list[str]:
    out = io.StringIO()
    print_results(results, Console(file=out, width=width, color_system=None))
    return out.getvalue().splitlines()


def _problems(lines: list[str], results: Results, width: int) -> list[str]:
    """What is unreadable in ``lines``: too long, a title not on one line, a broken word."""
    found = [f"line longer than {width}: {ln!r}" for ln in lines if len(ln) > width]
    stripped = {ln.strip() for ln in lines}
    words_on_lines = {w for ln in lines for w in re.split(r"[\s│┃|]+", ln) if w}
    for task in results.tasks:
        for tr in task.templates:
            title = table_title(task.task, tr.template, tr.condition)
            if title not in stripped:
                found.append(f"title {title!r} is not on one line")
            expected = [*task.difficulty_name.split(), "role", *score_column(task.spec).split(),
                        "95%", "CI"]
            expected += [w for b in tr.buckets for w in b.bucket.split()]
            found += [f"{w!r} broken ({task.task})" for w in expected if w not in words_on_lines]
    return found


@pytest.mark.parametrize("width", [80, 120])
def test_tables_fit_without_breaking_words(results: Results, width: int) -> None:
    assert _problems(_render(results, width), results, width) == []


def test_the_check_catches_a_wrapped_title_and_a_broken_word(results: Results) -> None:
    """The check fails on what the old layout printed: the title as the table's own title,
    wrapped at the table's width, and a header too narrow for its word."""
    one = Results.model_validate({**results.model_dump(), "tasks": [
        t for t in results.model_dump()["tasks"] if t["task"] == "lengthgen/addition_reversed"]})
    task = one.tasks[0]
    tr = task.templates[0]
    table = Table(title=table_title(task.task, tr.template, tr.condition))
    table.add_column(task.difficulty_name, max_width=3)
    for b in tr.buckets:
        table.add_row(b.bucket)
    out = io.StringIO()
    Console(file=out, width=80, color_system=None).print(table)
    problems = _problems(out.getvalue().splitlines(), one, 80)
    assert any(p.startswith("title ") for p in problems[:1]), problems
    assert "'digits' broken (lengthgen/addition_reversed)" in problems


def test_partial_credit_is_labelled_a_mean_score_not_accuracy(results: Results) -> None:
    """passkey's string_match_all gives partial credit: its column is `score %` (the same
    numbers and interval; docs/statistics.md says which); binary metrics and multiple choice
    keep `acc %`."""
    headings = {t.task: score_column(t.spec) for t in results.tasks}
    assert headings["lengthgen/passkey"] == "score %"
    assert headings["lengthgen/addition"] == "acc %"  # numeric_match
    assert headings["instructdiv/first_alphabetically"] == "acc %"  # multiple choice
    assert headings["easy2hard/math"] == "acc %"  # math_equiv
    assert set(headings.values()) == {"acc %", "score %"}
    lines = _render(results, 120)
    at = lines.index(next(ln for ln in lines if ln.startswith("lengthgen/passkey ")))
    assert "score %" in lines[at + 2] and "acc %" not in lines[at + 2], lines[at: at + 3]
