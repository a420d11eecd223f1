"""pandas tables of a leaderboard: leaderboard.csv, buckets.csv and leaderboard.md.

``leaderboard.csv`` holds fractions (0–1) with full precision; ``leaderboard.md`` shows
percentages with one decimal, gaps as ``value [low, high]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from harness.leaderboard.collect import HEADLINE_ANALYSES
from harness.leaderboard.paths import SafeWriter
from harness.leaderboard.schema import Entry, Leaderboard, TaskBoard


def analysis_columns(board: Leaderboard) -> list[str]:
    """Analyses shown as columns: the headline ones present, then any others, by name."""
    present = {n for e in board.entries for n in e.analyses}
    head = [n for n in HEADLINE_ANALYSES if n in present]
    return head + sorted(present - set(head))


def analysis_title(name: str) -> str:
    """Column title of an analysis."""
    return HEADLINE_ANALYSES.get(name, name)


def leaderboard_frame(board: Leaderboard) -> pd.DataFrame:
    """One row per entry, in rank order (fractions, not percentages)."""
    rows: list[dict[str, Any]] = []
    for e in board.entries:
        row: dict[str, Any] = {"rank": e.rank, "model": e.label, "entry": e.id,
                               "overall": e.overall}
        for s in board.suites:
            row[s] = e.suite_scores.get(s)
        row.update({"id_accuracy": e.id_accuracy, "ood_accuracy": e.ood_accuracy,
                    "gap": e.gap, "gap_ci_low": e.gap_ci_low, "gap_ci_high": e.gap_ci_high,
                    "retention": e.retention, "horizon_factor": e.horizon_factor})
        for a in analysis_columns(board):
            row[a] = e.analyses.get(a)
        row["n_tasks"] = e.n_tasks
        rows.append(row)
    return pd.DataFrame(rows)


def task_frame(task: TaskBoard, entries: list[Entry]) -> pd.DataFrame:
    """One row per entry on one task: one accuracy column per bucket, then the gaps."""
    label = {e.id: e.label for e in entries}
    rows: list[dict[str, Any]] = []
    for r in task.rows:
        row: dict[str, Any] = {"model": label.get(r.entry, r.entry), "template": r.template}
        if r.condition:
            row["template"] = f"{r.template} / {r.condition}"
        cells = {c.label: c for c in r.buckets}
        for b in task.buckets:
            c = cells.get(b.label)
            row[f"{b.label} ({b.role})"] = None if c is None else c.accuracy
        row.update({"ID": r.id_accuracy, "OOD": r.ood_accuracy, "gap": r.gap,
                    "gap_ci_low": r.gap_ci_low, "gap_ci_high": r.gap_ci_high,
                    "retention": r.retention, "horizon": r.horizon})
        for a in r.analyses:
            row[analysis_title(a.name)] = a.value
        rows.append(row)
    return pd.DataFrame(rows)


def buckets_frame(board: Leaderboard) -> pd.DataFrame:
    """Long format: one row per entry × task × bucket (what the curves plot)."""
    label = {e.id: e.label for e in board.entries}
    roles = {(t.task, b.label): b.role for t in board.tasks for b in t.buckets}
    rows = [{"model": label[r.entry], "entry": r.entry, "task": t.task, "template": r.template,
             "condition": r.condition, "bucket": c.label, "role": roles[(t.task, c.label)],
             "n": c.n, "accuracy": c.accuracy, "ci_low": c.ci_low, "ci_high": c.ci_high}
            for t in board.tasks for r in t.rows for c in r.buckets]
    return pd.DataFrame(rows)


def pct(x: Any, digits: int = 1) -> str:
    """A fraction as a percentage string; missing values as ``-``."""
    return "-" if x is None or pd.isna(x) else f"{100 * float(x):.{digits}f}"


def num(x: Any) -> str:
    """3 significant digits (whole numbers from 100 on); missing as ``-``."""
    if x is None or pd.isna(x):
        return "-"
    return f"{float(x):.0f}" if abs(float(x)) >= 100 else f"{float(x):.3g}"


def ci_text(value: Any, lo: Any, hi: Any) -> str:
    """``value [lo, hi]`` in percentage points."""
    if value is None or pd.isna(value):
        return "-"
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return pct(value)
    return f"{pct(value)} [{pct(lo)}, {pct(hi)}]"


def md_text(x: Any) -> str:
    """Text for Markdown: HTML metacharacters as entities (renderers pass raw HTML through),
    backslashes and ``|`` escaped, newlines flattened."""
    s = "" if x is None else str(x)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (cells already formatted, then escaped by md_text)."""
    cell = md_text

    head = "| " + " | ".join(cell(c) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = ["| " + " | ".join(cell(x) for x in row) + " |" for row in df.itertuples(index=False)]
    return "\n".join([head, sep, *body])


def _display_main(board: Leaderboard, df: pd.DataFrame) -> pd.DataFrame:
    out = pd.DataFrame({"rank": df["rank"], "model": df["model"],
                        "overall %": df["overall"].map(pct)})
    for s in board.suites:
        out[f"{s} %"] = df[s].map(pct)
    out["ID %"] = df["id_accuracy"].map(pct)
    out["OOD %"] = df["ood_accuracy"].map(pct)
    out["gap pts [95% CI]"] = [ci_text(v, lo, hi) for v, lo, hi in
                               zip(df["gap"], df["gap_ci_low"], df["gap_ci_high"], strict=True)]
    out["retention"] = df["retention"].map(num)
    out["horizon ×ID"] = df["horizon_factor"].map(num)
    for a in analysis_columns(board):
        out[analysis_title(a)] = df[a].map(num)
    out["tasks"] = df["n_tasks"]
    return out


def _display_task(task: TaskBoard, df: pd.DataFrame) -> pd.DataFrame:
    out = df.copy()
    for b in task.buckets:
        col = f"{b.label} ({b.role})"
        out[col] = out[col].map(pct)
    out["ID"] = out["ID"].map(pct)
    out["OOD"] = out["OOD"].map(pct)
    out["gap"] = [ci_text(v, lo, hi) for v, lo, hi in
                  zip(df["gap"], df["gap_ci_low"], df["gap_ci_high"], strict=True)]
    out = out.drop(columns=["gap_ci_low", "gap_ci_high"])
    out["retention"] = out["retention"].map(num)
    out["horizon"] = out["horizon"].map(num)
    for c in out.columns[list(out.columns).index("horizon") + 1:]:
        out[c] = out[c].map(num)
    return out


def markdown(board: Leaderboard) -> str:
    """The whole leaderboard.md."""
    df = leaderboard_frame(board)
    lines = [f"# {md_text(board.title)}", "",
             "Accuracies in %, models ranked by the mean of their suite scores (a suite score is "
             "the mean task accuracy over the suite's tasks). Gap: macro mean of the tasks' "
             "ID − OOD gaps in points with a 95% CI; retention: OOD / ID; horizon ×ID: mean "
             "extrapolation horizon as a multiple of the largest ID difficulty. Generated by "
             f"genharness {board.harness_version} (`harness leaderboard build`).", "",
             markdown_table(_display_main(board, df)), ""]
    for suite in board.suites:
        lines += [f"## {md_text(suite)}", ""]
        for t in (t for t in board.tasks if t.suite == suite):
            lines += [f"### {md_text(t.task)}", "",
                      f"{md_text(t.description)} Buckets: {md_text(t.difficulty_name)}.", "",
                      markdown_table(_display_task(t, task_frame(t, board.entries))), ""]
    if board.conflicts:
        lines += ["## Conflicting duplicates", ""]
        lines += [md_text(f"- {c.entry} {c.task}: kept {c.kept}, dropped {c.dropped}: "
                          f"{c.reason}") for c in board.conflicts]
        lines.append("")
    return "\n".join(lines)


def write_tables(board: Leaderboard, out: Path) -> list[Path]:
    """Write leaderboard.csv, buckets.csv and leaderboard.md into *out* (never through links)."""
    w = SafeWriter(out)
    return [w.write_text("leaderboard.csv",
                         leaderboard_frame(board).to_csv(index=False, lineterminator="\n")),
            w.write_text("buckets.csv",
                         buckets_frame(board).to_csv(index=False, lineterminator="\n")),
            w.write_text("leaderboard.md", markdown(board))]
