"""Terminal rendering of results: one table per task and template, then its gaps."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness.analyses.registry import AnalysisResult
from harness.results import Results
from harness.scoring.gaps import GapReport


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def gap_lines(g: GapReport) -> list[str]:
    """Human-readable lines for a gap report."""
    out = []
    if g.id_ood is not None:
        d = g.id_ood
        out.append(f"ID−OOD gap: {_pct(d.value)} pts  95% CI [{_pct(d.ci_low)}, {_pct(d.ci_high)}]"
                   f"  (n_ID={d.n_id}, n_OOD={d.n_ood}, bootstrap {d.resamples})")
    if g.retention is not None:
        r = g.retention
        val = "-" if r.value is None else f"{r.value:.3f}"
        ci = (
            "" if r.ci_low is None or r.ci_high is None
            else f"  95% CI [{r.ci_low:.3f}, {r.ci_high:.3f}]"
        )
        out.append(f"retention OOD/ID: {val}{ci}  (n_ID={r.n_id}, n_OOD={r.n_ood})")
    if g.horizon is not None:
        h = g.horizon
        if h.threshold == 0:
            out.append("extrapolation horizon: undefined (ID accuracy is 0)")
        elif h.value is None:
            out.append(f"extrapolation horizon: none (first bucket below {_pct(h.threshold)}%)")
        else:
            fac = "" if h.factor is None else f" = {h.factor:.2f}× the largest ID value"
            out.append(f"extrapolation horizon: {h.value:g}{fac} (threshold {_pct(h.threshold)}%)")
    return out


def analysis_line(a: AnalysisResult) -> str:
    """One line for a task-level analysis: value, CI and n."""
    val = "undefined" if a.value is None else f"{a.value:.4g}"
    ci = (
        "" if a.ci_low is None or a.ci_high is None
        else f"  95% CI [{a.ci_low:.4g}, {a.ci_high:.4g}]"
    )
    return f"{a.name}: {val}{ci}  (n={a.n})"


def print_results(results: Results, console: Console | None = None) -> None:
    """Print every task's bucket table and gap lines."""
    console = console or Console()
    console.print(escape(f"model: {results.model.backend}:{results.model.name}  "
                         f"seed: {results.run.seed}"))
    for task in results.tasks:
        for tr in task.templates:
            cond = f", condition {tr.condition}" if tr.condition else ""
            table = Table(title=escape(f"{task.task}  [template {tr.template}{cond}]"),
                          title_justify="left")
            for col, just in ((task.difficulty_name, "left"), ("role", "left"), ("n", "right"),
                              ("acc %", "right"), ("95% CI", "right")):
                table.add_column(col, justify=just)  # type: ignore[arg-type]
            for b in tr.buckets:
                table.add_row(b.bucket, b.role, str(b.n), _pct(b.accuracy),
                              f"[{_pct(b.ci_low)}, {_pct(b.ci_high)}]")
            for r in tr.roles:
                table.add_row(f"all {r.role}", r.role, str(r.n), _pct(r.accuracy),
                              f"[{_pct(r.ci_low)}, {_pct(r.ci_high)}]", style="bold")
            console.print(table)
            for line in gap_lines(tr.gaps):
                console.print("  " + escape(line))
        for a in task.analyses:
            console.print("  " + escape(analysis_line(a)))
