"""Terminal rendering of results: one table per task and template, then its gaps."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from harness.analyses.registry import AnalysisResult
from harness.answers.budget import CUT_MATERIAL
from harness.answers.metrics import is_binary
from harness.gaps.report import GapReport, value_and_ci
from harness.gaps.shift import Part, has_exemplars
from harness.run.results import HorizonResult, Results, TaskResult
from harness.scoring.aggregates import BucketAggregate, RoleAggregate
from harness.scoring.horizon import format_difficulty
from harness.scoring.report import TemplateReport
from harness.spec.horizon import WIDEN, WIDENINGS


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def gap_lines(g: GapReport, fixed_horizon: bool = True) -> list[str]:
    """Human-readable lines for a gap report; ``fixed_horizon=False`` leaves out the horizon
    gap's line (a horizon search's d50 stands for it: one horizon in the output)."""
    out = []
    if g.status != "measured":
        out.append(f"gaps: {g.status} — not measurable ({g.reason})")
    elif g.baseline is not None:
        out.append(f"baseline (best constant answer on the ID items): {_pct(g.baseline)}%")
    if g.id_ood is not None:
        d = g.id_ood
        out.append(f"ID−OOD gap: {_pct(d.value)} pts  95% CI [{_pct(d.ci_low)}, {_pct(d.ci_high)}]"
                   f"  (n_ID={d.n_id}, n_OOD={d.n_ood}, Newcombe)")
    if g.edge is not None:
        e = g.edge
        out.append(f"edge gap ({e.id_bucket} → {e.ood_bucket}): {_pct(e.value)} pts  95% CI "
                   f"[{_pct(e.ci_low)}, {_pct(e.ci_high)}]  (n={e.n_id}, {e.n_ood})")
    if g.retention is not None:
        r = g.retention
        val = "-" if r.value is None else f"{r.value:.3f}"
        ci = (
            f"  95% CI [{r.ci_low:.3f}, unbounded]" if r.ci_low is not None and r.unbounded_high
            else "" if r.ci_low is None or r.ci_high is None
            else f"  95% CI [{r.ci_low:.3f}, {r.ci_high:.3f}]"
        )
        out.append(f"retention OOD/ID: {val}{ci}  (n_ID={r.n_id}, n_OOD={r.n_ood})")
    if g.horizon is not None and fixed_horizon:
        h = g.horizon
        if h.threshold == 0:
            out.append("extrapolation horizon: undefined (ID accuracy is 0)")
        elif h.value is None:
            out.append(f"extrapolation horizon: none (first bucket below {_pct(h.threshold)}%)")
        else:
            fac = "" if h.factor is None else f" = {h.factor:.2f}× the largest ID value"
            out.append(f"extrapolation horizon: {h.value:g}{fac} (threshold {_pct(h.threshold)}%)")
    out += [value_line(name, *value_and_ci(d)) for name, d in g.extra.items()]
    if g.budget_bound:
        out.append(f"budget-bound: the answer budget cut wrong answers in bucket(s) "
                   f"{', '.join(g.budget_bound)}; the gaps rest on scores the budget may "
                   "have lowered")
    return out


def _part(p: Part | None) -> str:
    return "-" if p is None else f"{_pct(p.value)} [{_pct(p.ci_low)}, {_pct(p.ci_high)}]"


def shift_lines(task: TaskResult) -> list[str]:
    """The difficulty + shift split of each template, or why the task has none."""
    if not has_exemplars(task.spec):
        return ["no exemplars: the ID−OOD gap is a difficulty gap (no exemplar shift to "
                "control)"]
    if not task.shift:
        measured = any(t.gaps.id_ood is not None for t in task.templates)
        return (["difficulty + shift: run with --matched-control to split the gap"]
                if measured else [])
    out = []
    for x in task.shift:
        if x.gap is None:
            out.append(f"difficulty + shift [{x.template}]: {x.status}, not split")
            continue
        out.append(f"gap = difficulty + shift [{x.template}]: {_part(x.gap)} = "
                   f"{_part(x.difficulty)} + {_part(x.shift)} pts (matched exemplars, "
                   f"n_OOD={x.n_ood})")
        out.append("  shift per OOD bucket: " + ", ".join(
            f"{b.bucket}: {_pct(b.shift.value)}" for b in x.buckets))
        bound = sorted({b for t in task.templates if t.template == x.template
                        for b in t.gaps.budget_bound})
        if bound:
            out.append(f"  budget-bound: the split rests on bucket(s) {', '.join(bound)}, "
                       "whose wrong answers the answer budget cut")
    return out


def value_line(name: str, v: float | None, lo: float | None = None, hi: float | None = None,
               n: int | None = None) -> str:
    """One line for a named number (an analysis, a registered gap): value, CI and n."""
    val = "undefined" if v is None else f"{v:.4g}"
    ci = "" if lo is None or hi is None else f"  95% CI [{lo:.4g}, {hi:.4g}]"
    return f"{name}: {val}{ci}" + ("" if n is None else f"  (n={n})")


def analysis_line(a: AnalysisResult) -> str:
    """One line for a task-level analysis: value, CI and n."""
    return value_line(a.name, a.value, a.ci_low, a.ci_high, a.n)


def table_title(task: str, template: str, condition: str = "") -> str:
    """The heading of one task-and-template table."""
    cond = f", condition {condition}" if condition else ""
    return f"{task}  [template {template}{cond}]"


def _longest_word(texts: list[str]) -> int:
    return max((len(w) for t in texts for w in t.split()), default=1)


def score_column(spec: Mapping[str, Any]) -> str:
    """The heading of a task's score column: ``acc %`` when every score is 0 or 1 (multiple
    choice, or a metric declared binary), else ``score %``, the mean of partial credit."""
    if spec.get("output", {}).get("type") == "multiple_choice":
        return "acc %"
    return "acc %" if is_binary(str(spec.get("scoring", {}).get("metric", ""))) else "score %"


def bucket_table(difficulty_name: str, tr: TemplateReport, score: str = "acc %") -> Table:
    """One template's bucket rows and pooled ID/OOD rows (``score``: the score column's
    heading, ``score_column``).

    Readable at 80 columns: only the difficulty column wraps, between words (it is never
    narrower than its longest word); numbers, roles and intervals stay on one line.
    """
    labels = [b.bucket for b in tr.buckets] + [f"all {r.role}" for r in tr.roles]
    table = Table(title_justify="left")
    table.add_column(difficulty_name, justify="left", overflow="fold",
                     min_width=_longest_word([difficulty_name, *labels]))
    for col in ("role", "n", score, "95% CI", "base %", "note"):
        table.add_column(col, justify="left" if col in ("role", "note") else "right",
                         no_wrap=True)
    for b in tr.buckets:
        if b.n == 0:
            continue
        table.add_row(b.bucket, b.role, str(b.n), _pct(b.accuracy),
                      f"[{_pct(b.ci_low)}, {_pct(b.ci_high)}]", _pct(b.baseline), _note(b))
    for r in tr.roles:
        if r.n == 0:
            continue
        table.add_row(f"all {r.role}", r.role, str(r.n), _pct(r.accuracy),
                      f"[{_pct(r.ci_low)}, {_pct(r.ci_high)}]", _pct(r.baseline), _note(r),
                      style="bold")
    return table


def metrics_table(difficulty_name: str, tr: TemplateReport) -> Table | None:
    """The other metrics of ``scoring.metrics``: each one's score and 95% interval per bucket
    and per role, in the rows of ``bucket_table`` (None: the task has one metric)."""
    if not tr.metrics:
        return None
    labels = [b.bucket for b in tr.buckets] + [f"all {r.role}" for r in tr.roles]
    table = Table(title_justify="left")
    table.add_column(difficulty_name, justify="left", overflow="fold",
                     min_width=_longest_word([difficulty_name, *labels]))
    table.add_column("role", no_wrap=True)
    for m in tr.metrics:
        head = "acc %" if is_binary(m.metric) else "score %"
        table.add_column(f"{m.metric} {head}", justify="right", overflow="fold")
        table.add_column("95% CI", justify="right", no_wrap=True)

    def cells(rows: list[BucketAggregate] | list[RoleAggregate], i: int) -> list[str]:
        r = rows[i]
        return [_pct(r.accuracy), f"[{_pct(r.ci_low)}, {_pct(r.ci_high)}]"]

    for i, b in enumerate(tr.buckets):
        if b.n:
            table.add_row(b.bucket, b.role, *[c for m in tr.metrics for c in cells(m.buckets, i)])
    for i, r in enumerate(tr.roles):
        if r.n:
            table.add_row(f"all {r.role}", r.role,
                          *[c for m in tr.metrics for c in cells(m.roles, i)], style="bold")
    return table


def _note(row: BucketAggregate | RoleAggregate) -> str:
    """``floor`` where the score is not above the baseline, ``1 answer N%`` for a constant
    answerer, ``cut N%`` where answers stopped on the answer budget (``budget-bound`` where
    wrong ones among them are a material share: the score may be the budget's; ``context-bound``
    where those ran out of the model's context instead: the model's own limit; ``in a loop N%``:
    the share cut while repeating itself)."""
    notes = ["floor"] if row.floor else []
    if row.constant and row.concentration is not None:
        notes.append(f"1 answer {100 * row.concentration:.0f}%")
    if row.cut:
        notes.append(f"cut {100 * row.cut:.0f}%"
                     + (f" (in a loop {100 * row.looped:.0f}%)" if row.looped else "")
                     + (", budget-bound" if row.budget_bound else "")
                     + (", context-bound" if row.context_bound else ""))
    return ", ".join(notes)


def not_evaluated(tr: TemplateReport) -> str | None:
    """The buckets a condition does not evaluate, on one line (None: it evaluates all)."""
    empty = [b.bucket for b in tr.buckets if b.n == 0]
    return f"not evaluated: {', '.join(empty)}" if empty else None


def print_task(task: TaskResult, console: Console) -> None:
    """One task's bucket tables (one per template and condition), gap and analysis lines. A
    template and condition with a horizon search shows its d50 alone, not also the fixed
    buckets' extrapolation horizon."""
    searched = {(h.template, h.condition) for h in task.horizons}
    for tr in task.templates:
        console.print(Text(table_title(task.task, tr.template, tr.condition), style="italic"))
        console.print(bucket_table(task.difficulty_name, tr, score_column(task.spec)))
        if (others := metrics_table(task.difficulty_name, tr)) is not None:
            console.print(Text("other metrics (scoring.metrics)", style="italic"))
            console.print(others)
        skipped = not_evaluated(tr)
        fixed = (tr.template, tr.condition) not in searched
        for line in ([skipped] if skipped else []) + gap_lines(tr.gaps, fixed):
            console.print("  " + escape(line))
    for line in shift_lines(task):
        console.print("  " + escape(line))
    for line in horizon_lines(task):
        console.print("  " + escape(line))
    for a in task.analyses:
        console.print("  " + escape(analysis_line(a)))


def horizon_text(h: HorizonResult, unit: str) -> str:
    """d50 with its interval, or its censored status, in difficulty units and ×ID edge."""
    if h.status == "floor":
        return f"none (the ID level is not above the item baseline {_pct(h.baseline)}%)"
    if h.status == "above":
        return f"≥ {h.range_hi} {unit} (still above the midpoint at the end of the range)"
    if h.status == "below":
        return f"≤ {h.range_lo} {unit} (below the midpoint at the smallest difficulty)"
    if h.status == "misfit":
        return f"none: {misfit_text(h)}"
    assert h.d50 is not None and h.lower is not None
    upper = f"> {h.range_hi}" if h.upper is None else format_difficulty(h.upper)
    # "inside the ID range" only where the whole interval lies below the last ID value
    # (leaderboard/claims): a point estimate below it is not evidence enough
    inside = h.upper is not None and h.upper < h.edge
    fac = "" if h.factor is None else f" = {h.factor:.2f}× the ID edge {h.edge:g}" + (
        ", inside the ID range (the whole interval below the edge)" if inside else "")
    d50 = format_difficulty(h.d50)
    lower = f"< {h.range_lo}" if h.lower < h.range_lo else format_difficulty(h.lower)
    return f"{d50} {unit}{fac}  95% interval [{lower}, {upper}]"


RANGE_ENDS = {  # what ended a horizon search's range, in words (HorizonResult.range_end)
    "limit": "the task's horizon.limit",
    "cap": f"the widening cap ({WIDEN ** WIDENINGS} × horizon.max)",
    "context": "the model's context", "generator": "the generator's work budget",
    "output": "the answer budget (a run before budgets grew with their targets)"}


def misfit_text(h: HorizonResult) -> str:
    """Why a search reports no single fall: the check's p-value and the tried accuracies."""
    acc = ", ".join(f"{format_difficulty(d)}: {_pct(a)}% of {n}" for d, a, n in h.accuracies())
    p = "" if h.fit_p is None else f" (check round p = {h.fit_p:.2g})"
    return f"no single fall{p}; accuracy by difficulty {acc}"


def horizon_lines(task: TaskResult) -> list[str]:
    """One line per horizon search (template, condition) of the task."""
    out = []
    for h in task.horizons:
        cond = f", {h.condition} exemplars" if h.condition else ""
        end = ("" if h.range_end == "spec"
               else f"; {RANGE_ENDS.get(h.range_end, h.range_end)} ends the range at "
               f"{h.range_hi}")
        level = ("" if h.status == "floor"
                 else f"midpoint of {_pct(h.top)}% and baseline {_pct(h.baseline)}%; ")
        if h.status != "floor" and h.overdispersion >= 0.05:  # answers wander more than chance
            level += f"batches correlated, ρ ≈ {h.overdispersion:.2f}; "
        if h.lost >= CUT_MATERIAL:
            level += (f"budget-bound: {_pct(h.lost)}% of the search's answers wrong and cut "
                      "by the answer budget; ")
        if h.context_lost >= CUT_MATERIAL:
            level += (f"context-bound: {_pct(h.context_lost)}% of the search's answers wrong "
                      "and cut where the model's context ended; ")
        out.append(f"horizon d50 ({h.template}{cond}): {horizon_text(h, task.difficulty_name)}  "
                   f"({level}{h.items} search + {h.id_items} ID answers{end})")
        if h.level is not None and h.at_level is not None and h.status not in ("floor",
                                                                                "misfit"):
            mid, lo, hi = (f"> {h.range_hi}" if x is None else format_difficulty(x)
                           for x in h.at_level)
            out.append(f"  down to {100 * h.level:g}% of the easy-item level "
                       f"({h.template}{cond}): {mid} {task.difficulty_name}  95% interval "
                       f"[{lo}, {hi}]")
    return out


def print_header(model: str, seed: int, console: Console) -> None:
    """The line above the tables."""
    console.print(escape(f"model: {model}  seed: {seed}"))


def print_footer(results: Results, console: Console) -> None:
    """The line below the tables (the limit reminder of a first look)."""
    if results.model.backend == "planted":  # models/planted: a check, never a model's result
        console.print(escape(f"planted-truth model ({results.model.name}): answers drawn from "
                             "a declared curve, not a real model's; leaderboard build refuses "
                             "this run"), style="bold")
    limit = results.run.limit_per_bucket
    if limit is not None and results.tasks:
        console.print(escape(f"at most {limit} items per bucket, a first look: drop "
                             "--limit-per-bucket for all items"), style="dim")


def print_results(results: Results, console: Console | None = None) -> None:
    """Print every task's bucket table and gap lines; the title of each table is a line of
    its own (a table title wraps at the table's width)."""
    console = console or Console()
    print_header(f"{results.model.backend}:{results.model.name}", results.run.seed, console)
    for task in results.tasks:
        print_task(task, console)
    print_footer(results, console)
