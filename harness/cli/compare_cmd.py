"""``harness compare A B``: accuracy differences between two runs, item by item where their items
are identical."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

if TYPE_CHECKING:
    from harness.leaderboard.paired import Comparison, PairedStat


def _p(x: float) -> str:
    return f"{x:.2g}" if x < 0.001 else f"{x:.3f}"


def _flags(s: PairedStat) -> str:
    out = []
    if s.tests_disagree:
        out.append("CI and test disagree")
    return ", ".join(out)


def _row(s: PairedStat) -> list[str]:
    return [escape(s.scope), s.role or "", str(s.n_items), f"{100 * s.acc_a:.1f}",
            f"{100 * s.acc_b:.1f}", f"{100 * s.diff:+.1f}",
            f"[{100 * s.ci_low:+.1f}, {100 * s.ci_high:+.1f}]",
            f"{s.a_only}/{s.b_only}" if s.paired else "–",
            _p(s.p_value) + ("" if s.p_holm is None else f" ({_p(s.p_holm)})")]


def print_comparison(c: Comparison, console: Console | None = None) -> None:
    """One table per task (all, then per bucket) and the pooled line."""
    console = console or Console()
    design = (
        f"seed {c.seed}, the same items in both runs: paired. diff = score(B) − score(A) "
        f"(mean score: accuracy on exact-match tasks) in points with a paired "
        f"{int(c.level * 100)}% score interval (items as the unit); sign-test p-value over "
        "items (McNemar's test when each item has one binary sample; exact binomial below 25 "
        "discordant items), Holm-adjusted over the tasks in brackets; items where A / B scores "
        "higher (A>B/B>A)"
        if c.paired else
        f"seeds {c.seed} and {c.seed_b}: the items differ, so they are NOT paired; each task "
        "where they differ is compared as two independent samples: diff = score(B) − score(A) "
        f"in points with Newcombe's {int(c.level * 100)}% interval and the p-value that inverts "
        "it "
        "(Holm-adjusted over the tasks in brackets)")
    console.print(escape(f"A: {c.model_a}  ({c.run_a})\nB: {c.model_b}  ({c.run_b})\n{design}"))
    for t in c.tasks:
        kind = "paired" if t.overall.paired else "independent samples: the items differ"
        table = Table(title=escape(f"{t.task} ({kind})"), title_justify="left")
        for col in ("bucket", "role", "items", "A %", "B %", "diff", "95% CI", "A>B/B>A",
                    "p (Holm)"):
            table.add_column(col, justify="left" if col in ("bucket", "role") else "right")
        table.add_row(*_row(t.overall), style="bold")
        for b in t.buckets:
            table.add_row(*_row(b))
        console.print(table)
        flagged = [f"{s.scope}: {_flags(s)}" for s in (t.overall, *t.buckets) if _flags(s)]
        if flagged:
            console.print(escape("  flags: " + "; ".join(flagged)))
    for m in [*c.suites, c.overall]:
        console.print(escape(f"{m.scope} ({m.n_tasks} tasks, leaderboard definition): A "
                             f"{100 * m.acc_a:.1f}%  B {100 * m.acc_b:.1f}%  diff "
                             f"{100 * m.diff:+.1f} [{100 * m.ci_low:+.1f}, "
                             f"{100 * m.ci_high:+.1f}]"))
    o = c.pooled
    console.print(escape(f"all items pooled: {o.n_items} items  A {100 * o.acc_a:.1f}%  B "
                         f"{100 * o.acc_b:.1f}%  diff {100 * o.diff:+.1f} [{100 * o.ci_low:+.1f}, "
                         f"{100 * o.ci_high:+.1f}]  p={_p(o.p_value)} ({o.test})"
                         + (f"  {_flags(o)}" if _flags(o) else "")))


def compare_command(
    run_a: Annotated[Path, typer.Argument(help="Run A: results.json or its folder.")],
    run_b: Annotated[Path, typer.Argument(help="Run B: results.json or its folder.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    tasks: Annotated[str | None, typer.Option(help="Only these tasks (comma-separated).")] = None,  # noqa: UP007
) -> None:
    """Compare two runs: per task and bucket, score(B) − score(A) (mean scores) with a 95% score
    interval and a p-value; item by item (sign test) where both ran identical items (same seed,
    prompts and targets), else as two independent samples (Newcombe), which the output says."""
    from harness.leaderboard.paired import compare_runs

    chosen = [t.strip() for t in tasks.split(",") if t.strip()] if tasks else None
    result = compare_runs(run_a, run_b, tasks=chosen)
    if as_json:
        typer.echo(json.dumps(result.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        print_comparison(result)
