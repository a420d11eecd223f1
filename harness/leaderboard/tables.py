"""pandas tables of a leaderboard: leaderboard.csv, buckets.csv and leaderboard.md.

``leaderboard.csv`` holds fractions (0–1) with full precision; ``leaderboard.md`` shows
percentages with one decimal, gaps as ``value [low, high]``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from harness.leaderboard.board_file import (
    BucketCell,
    Entry,
    Leaderboard,
    Split,
    TaskBoard,
    TaskRow,
)
from harness.leaderboard.claims import against_baselines
from harness.leaderboard.families import seed_words
from harness.leaderboard.horizons import d50_text, entry_d50_text
from harness.leaderboard.paths import SafeWriter
from harness.leaderboard.precision import entry_mark, precision_words
from harness.leaderboard.registered import (
    analysis_columns,
    analysis_title,
    arrow,
    gap_arrow,
    gap_columns,
    gap_head,
    gap_title,
    task_gap_columns,
)
from harness.leaderboard.scores import ALPHA
from harness.scoring.floors import FLOOR_RULE


def leaderboard_frame(board: Leaderboard) -> pd.DataFrame:
    """One row per entry, in group and rank order (fractions, not percentages)."""
    rows: list[dict[str, Any]] = []
    for e in board.entries:
        row: dict[str, Any] = {"group": e.group + 1, "rank": e.rank, "rank_low": e.rank_low,
                               "rank_high": e.rank_high, "model": e.label, "entry": e.id,
                               "engine": e.card.engine,
                               "public_id": e.card.public_id, "overall": e.overall.value,
                               "overall_ci_low": e.overall.ci_low,
                               "overall_ci_high": e.overall.ci_high,
                               "overall_tasks": e.overall.n_tasks,
                               "overall_all": e.overall_all.value if e.overall_all else None}
        for s in board.suites:
            sc = e.suite_scores.get(s)
            row[s] = sc.value if sc else None
            row[f"{s}_ci_low"] = sc.ci_low if sc else None
            row[f"{s}_ci_high"] = sc.ci_high if sc else None
            row[f"{s}_tasks"] = sc.n_tasks if sc else 0
        row.update({"id_accuracy": e.id_accuracy, "ood_accuracy": e.ood_accuracy,
                    "gap": e.gap, "gap_ci_low": e.gap_ci_low, "gap_ci_high": e.gap_ci_high,
                    "gap_p_holm": e.gap_p_holm, "gap_tasks": e.n_gap_tasks,
                    "gap_measured": e.n_measured,
                    "gap_floor": e.n_floor, "gap_ceiling": e.n_ceiling,
                    "constant_answerer_tasks": e.n_constant,
                    "retention": e.retention, "horizon_factor": e.horizon_factor,
                    "horizon_tasks": e.n_horizon})
        if any(x.n_d50 for x in board.entries):
            row.update({"d50_factor": e.d50_factor, "d50_factor_high": e.d50_factor_high,
                        "d50_tasks": e.n_d50 or 0,
                        "d50_above": e.n_d50_above or 0})
        for g in gap_columns(board):
            row[g] = e.gaps.get(g)
            row[f"{g}_tasks"] = e.gaps_n.get(g, 0)
        for a in analysis_columns(board):
            row[a] = e.analyses.get(a)
            row[f"{a}_tasks"] = e.analyses_n.get(a, 0)
        row["n_tasks"] = e.n_tasks
        row["precision"] = entry_mark(board.precision, e.id)
        rows.append(row)
    return pd.DataFrame(rows)


def _gap_cell(r: TaskRow) -> str:
    if r.status != "measured":
        return r.status
    return ci_text(r.gap, r.gap_ci_low, r.gap_ci_high) + star(r.gap_p_holm) + against_baselines(r)


def split_cell(r: TaskRow, part: Split | None) -> str:
    """A cell of the difficulty + shift split: the part with its interval; the status where
    no gap is measured; "no exemplars" where the task shows none (the gap is all difficulty)."""
    if not r.exemplars:
        return "no exemplars"
    if r.status != "measured":
        return r.status
    if part is None:
        return "-"
    return ci_text(part.value, part.ci_low, part.ci_high) + against_baselines(r, part)


def _cell_text(c: BucketCell) -> str:
    """A bucket's accuracy with n, its baseline, and marks for the floor, a constant answer
    and answers the budget cut (``cut N%``; ``budget-bound`` where wrong ones among them are a
    material share)."""
    marks = ("≤base " if c.floor else "") + ("1-answer " if c.constant else "")
    if c.cut:
        marks += (f"cut {pct(c.cut, 0)}% " + (f"(in a loop {pct(c.looped, 0)}%) " if c.looped
                                              else "")
                  + ("budget-bound " if c.budget_bound else "")
                  + ("context-bound " if c.context_bound else ""))
    base = "" if c.baseline is None else f", base {pct(c.baseline)}"
    return f"{pct(c.accuracy)} (n={c.n}{base}) {marks}".rstrip()


def task_frame(task: TaskBoard, entries: list[Entry]) -> pd.DataFrame:
    """One row per entry on one task: one accuracy column per bucket (with n), then the gaps
    (floor / ceiling instead of a number where no gap is measurable), the analyses, and each
    other metric's (``scoring.metrics``) ID and OOD score with its interval."""
    label = {e.id: e.label for e in entries}
    gaps = task_gap_columns(task)
    searched = any(r.d50 for r in task.rows)
    rows: list[dict[str, Any]] = []
    for r in task.rows:
        row: dict[str, Any] = {"model": label.get(r.entry, r.entry), "template": r.template}
        if r.condition:
            row["template"] = f"{r.template} / {r.condition}"
        cells = {c.label: c for c in r.buckets}
        for b in task.buckets:
            c = cells.get(b.label)
            row[f"{b.label} ({b.role})"] = ("not evaluated" if c is None or c.n == 0
                                            else _cell_text(c))
        row.update({"all": f"{pct(r.accuracy)} (n={r.n_items})",
                    "ID": f"{pct(r.id_accuracy)} (n={r.n_id}, base {pct(r.baseline)})",
                    "OOD": f"{pct(r.ood_accuracy)} (n={r.n_ood}, base {pct(r.ood_baseline)})",
                    gap_head("id_ood"): _gap_cell(r),
                    "edge gap pts": (r.status if r.status != "measured" else "-" if r.edge is None
                                     else ci_text(r.edge.value, r.edge.ci_low, r.edge.ci_high)),
                    "difficulty pts": split_cell(r, r.difficulty),
                    "shift pts": split_cell(r, r.shift),
                    gap_head("retention"): _measured(r, r.retention),
                    gap_head("horizon"): _measured(r, r.horizon)})
        if searched:
            row["d50 [95%] ×ID"] = d50_text(r.d50)
            if any(x.d50_matched for x in task.rows):
                row["d50 matched exemplars (midpoint of its own easy-item level)"] = d50_text(
                    r.d50_matched)
        for g in gaps:
            cell = r.gaps.get(g)
            row[gap_head(g)] = _measured(r, None if cell is None else cell.value)
        for a in r.analyses:
            row[analysis_title(a.name)] = num(a.value)
        for name, m in r.metrics.items():  # the task's other metrics (scoring.metrics)
            row.update({f"{name} {c.label}": ci_text(c.accuracy, c.ci_low, c.ci_high)
                        for c in m.roles})
        rows.append(row)
    return pd.DataFrame(rows)


def _measured(r: TaskRow, value: float | None) -> str:
    """A gap's cell: its value, or the row's status where no gap is measurable."""
    return r.status if r.status != "measured" else num(value)


def buckets_frame(board: Leaderboard) -> pd.DataFrame:
    """Long format: one row per entry × task × bucket (what the curves plot)."""
    label = {e.id: e.label for e in board.entries}
    roles = {(t.task, b.label): b.role for t in board.tasks for b in t.buckets}
    rows = [{"model": label[r.entry], "entry": r.entry, "task": t.task, "template": r.template,
             "condition": r.condition, "bucket": c.label, "role": roles[(t.task, c.label)],
             "n": c.n, "accuracy": c.accuracy, "ci_low": c.ci_low, "ci_high": c.ci_high,
             "baseline": c.baseline, "floor": c.floor, "constant_answerer": c.constant}
            for t in board.tasks for r in t.rows for c in r.buckets
            if c.n > 0]  # a bucket the task's conditions do not evaluate has no row
    return pd.DataFrame(rows)


def pct(x: Any, digits: int = 1) -> str:
    """A fraction as a percentage string; missing values as ``-``."""
    return "-" if x is None or pd.isna(x) else f"{100 * float(x):.{digits}f}"


def num(x: Any) -> str:
    """3 significant digits (whole numbers from 100 on); missing as ``-``."""
    if x is None or pd.isna(x):
        return "-"
    return f"{float(x):.0f}" if abs(float(x)) >= 100 else f"{float(x):.3g}"


def star(p: float | None) -> str:
    """``*`` for a corrected p-value below 0.05."""
    return "*" if p is not None and p < ALPHA else ""


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


def _display_main(board: Leaderboard) -> pd.DataFrame:
    rows = []
    for e in board.entries:
        rank = str(e.rank) if e.rank_low == e.rank_high else f"{e.rank_low}–{e.rank_high}"
        row = {"group": e.group + 1, "rank ↓": rank, "model": e.label, "engine": e.card.engine,
               "overall % ↑ (off-floor tasks)":
               f"{ci_text(e.overall.value, e.overall.ci_low, e.overall.ci_high)} "
               f"({e.overall.n_tasks})",
               "all tasks %": "-" if (oa := e.overall_all) is None else
               f"{ci_text(oa.value, oa.ci_low, oa.ci_high)} ({oa.n_tasks})"}
        for s in board.suites:
            sc = e.suite_scores.get(s)
            row[f"{s} % ↑"] = "-" if sc is None else (
                f"{ci_text(sc.value, sc.ci_low, sc.ci_high)} ({sc.n_tasks})")
        row.update({"ID % ↑": pct(e.id_accuracy), "OOD % ↑": pct(e.ood_accuracy),
                    " ".join(filter(None, (gap_title("id_ood"), "pts", gap_arrow("id_ood"),
                                         "[95% CI]"))):
                    ci_text(e.gap, e.gap_ci_low, e.gap_ci_high) + star(e.gap_p_holm),
                    "gap tasks": str(e.n_gap_tasks),
                    "measured/floor/ceiling": f"{e.n_measured}/{e.n_floor}/{e.n_ceiling}",
                    "1-answer tasks": str(e.n_constant),
                    gap_head("retention"): num(e.retention),
                    f"{gap_title('horizon')} ×ID {gap_arrow('horizon')}":
                    f"{num(e.horizon_factor)} ({e.n_horizon})"})
        if any(x.n_d50 for x in board.entries):
            row["d50 ×ID (median)"] = entry_d50_text(e.d50_factor, e.n_d50, e.n_d50_above,
                                                     e.d50_factor_high)
        for g in gap_columns(board):
            row[gap_head(g)] = f"{num(e.gaps.get(g))} ({e.gaps_n.get(g, 0)})"
        for a in analysis_columns(board):
            row[f"{analysis_title(a)} {arrow(a)}"] = (
                "floor tasks only" if a in e.analyses_floor_only else
                f"{num(e.analyses.get(a))} ({e.analyses_n.get(a, 0)})")
        row["tasks"] = str(e.n_tasks)
        row["precision: target: rows meeting/rows"] = entry_mark(board.precision, e.id)
        rows.append(row)
    return pd.DataFrame(rows)


def markdown(board: Leaderboard) -> str:
    """The whole leaderboard.md."""
    p = board.precision
    lines = [f"# {md_text(board.title)}", ""]
    if board.stale_tasks:
        lines += [md_text(f"**Stale against this checkout:** {len(board.stale_tasks)} of "
                          f"{len(board.tasks)} tasks ran with a spec, on items or with a horizon "
                          f"search that differ from today's task files, generators and search "
                          f"({', '.join(board.stale_tasks)}); rerun them."), ""]
    lines += [md_text(precision_words(p, {e.id: e.label for e in board.entries})
                      + f" Rows below their target: {len(p.short)}."), "",
        "Accuracies in %, with 95% score intervals (docs/statistics.md): a task's accuracy is "
        "the mean of its buckets' accuracies weighted by their samples, so overall and suite "
        "intervals combine every (task, bucket) stratum (MOVER). Overall: mean of the suite "
        "scores over the tasks off the floor for every entry of the group (their count in "
        "brackets; the all-task mean beside it); suite score: mean over those of its tasks of "
        "the accuracy over every sample (the count of tasks in brackets). Entries are ranked "
        "within groups of entries that ran the same tasks; a rank range runs from 1 + the "
        "entries whose overall interval lies wholly above "
        "to the group size − those wholly below. Gap: mean over the tasks where it is "
        "measured for every entry of the group (their count: gap tasks; "
        f"{FLOOR_RULE}; "
        "ceiling: both roles at 100%; both counted, never averaged); * significant after "
        f"{board.correction} correction. 1-answer tasks: tasks where one answer makes up at "
        "least 90% of a bucket's or role's answers. Per task, the edge gap is last ID bucket "
        "− first OOD bucket, and gap = difficulty + shift splits the ID − OOD gap with the "
        "matched-exemplar control (OOD items answered again with exemplars from their own "
        "bucket; docs/statistics.md). "
        "↑ higher is better, ↓ lower is better; the gap is a measurement, not a merit, and "
        "has no direction. Cells show n (items). Generated by "
        f"genharness {board.harness_version} (`harness leaderboard build`).", "",
        markdown_table(_display_main(board)), ""]
    if board.families:
        lines += ["## Model families", ""]
        lines += [md_text(f"- {f.family}: {len(f.members)} members, overall "
                          f"{pct(f.overall_mean)} ± {pct(f.overall_sd)} (min–max "
                          f"{pct(f.overall_min)}–{pct(f.overall_max)}) over {len(f.tasks)} "
                          "tasks" + "".join(
                              f"; {t}: {seed_words(s)}" for t, s in f.success.items()))
                  for f in board.families]
        lines.append("")
    for suite in board.suites:
        lines += [f"## {md_text(suite)}", ""]
        for t in (t for t in board.tasks if t.suite == suite):
            lines += [f"### {md_text(t.task)}", "",
                      f"{md_text(t.description)} Buckets: {md_text(t.difficulty_name)}. "
                      f"Few-shot: {md_text(t.fewshot)}. Metric: {md_text(t.metric)}.", "",
                      markdown_table(task_frame(t, board.entries)), ""]
    if board.conflicts:
        lines += ["## Conflicting duplicates", ""]
        lines += [md_text(f"- {c.entry} {c.task}: kept {c.kept}, dropped {c.dropped}: "
                          f"{c.reason}") for c in board.conflicts]
        lines.append("")
    lines += ["## Sources", ""]
    lines += [md_text(f"- {s.path}: {s.public_id}, commit {(s.git_commit or '-')[:12]}"
                      f"{' (dirty)' if s.git_dirty else ''}, "
                      f"cache hits {s.cache_hits if s.cache_hits is not None else '-'}; "
                      f"reproduce: {s.reproduce}") for s in board.sources]
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
