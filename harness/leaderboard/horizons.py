"""The board's d50 cells: a task row's adaptive horizon (``--horizon``) and an entry's summary."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping

from harness.answers.budget import CUT_MATERIAL
from harness.gaps.shift import MATCHED
from harness.leaderboard.board_file import HorizonCell, Leaderboard, TaskBoard, TaskRow
from harness.run.results import HorizonResult, TaskResult
from harness.scoring.horizon import format_difficulty
from harness.scoring.stats import r10


def _cell(h: HorizonResult) -> HorizonCell:
    def r(x: float | None) -> float | None:
        return None if x is None else r10(x)

    return HorizonCell(status=h.status, d50=r(h.d50), ci_low=r(h.lower), ci_high=r(h.upper),
                       factor=r(h.factor), edge=h.edge, range_lo=h.range_lo,
                       range_hi=h.range_hi,
                       range_end=h.range_end, top=r10(h.top), spread=r10(h.spread),
                       baseline=r10(h.baseline), items=h.items,
                       fixed_crossing=r(h.fixed_crossing), overdispersion=r10(h.overdispersion),
                       shapes=[r10(x) for x in h.shapes], fit_p=r(h.fit_p),
                       accuracies=[(d, r10(a), n) for d, a, n in h.accuracies()],
                       lost=r10(h.lost), context_lost=r10(h.context_lost))


def horizon_cells(t: TaskResult, template: str) -> tuple[HorizonCell | None, HorizonCell | None]:
    """The d50 of ``template`` with ID exemplars, and under the matched-exemplar control."""
    by = {h.condition: h for h in t.horizons if h.template == template}
    base, matched = by.get(""), by.get(MATCHED)
    return (None if base is None else _cell(base), None if matched is None else _cell(matched))


def _bounds(c: HorizonCell) -> tuple[float, float] | None:
    """What a d50 cell says of the d50 ×ID factor, as (lower, upper) bounds: a measured d50 its
    factor twice; "≥ max" from the range's end up; "≤ min" and floor (no level above the
    baseline to fall from) from 0 to the smallest difficulty; a misfit nothing."""
    if not c.edge or c.status == "misfit":
        return None
    if c.status == "measured" and c.factor is not None:
        return c.factor, c.factor
    if c.status == "above":
        return c.range_hi / c.edge, math.inf
    return 0.0, max(c.range_lo, 1) / c.edge


def entry_horizons(rows: Mapping[str, TaskRow], common: Iterable[str] | None = None
                   ) -> tuple[float | None, float | None, int | None, int | None]:
    """The median d50 ×ID over the tasks searched for every entry of the group (``common``;
    None: every task the entry searched), with censored tasks counted where they lie: the
    median's lower and upper bounds (the medians of the tasks' bounds: equal where no
    censored task decides it; upper None where it is unbounded), the tasks it covers and
    those still above the midpoint at the end of their range (all None: no task searched)."""
    names = [n for n, r in rows.items() if r.d50 is not None
             and (common is None or n in set(common))]
    bounds = [b for n in names if (c := rows[n].d50) is not None and (b := _bounds(c))]
    if not names:
        return None, None, None, None
    above = sum(c.status == "above" for n in names if (c := rows[n].d50) is not None)
    if not bounds:
        return None, None, len(names), above
    lo = statistics.median(b[0] for b in bounds)
    hi = statistics.median(b[1] for b in bounds)
    return r10(lo), None if math.isinf(hi) else r10(hi), len(names), above


_g = format_difficulty


def d50_text(c: HorizonCell | None) -> str:
    """A d50 cell as text: "13.6 [9.9, 28.5] ×1.70", "≥ 64" (with what ended the range
    where the task's own range did not: "≥ 41 (context)"), "≤ 1" or "none" ("-": no search);
    "budget-bound" after one whose answers the budget cut, "context-bound" where the model's
    context did."""
    if c is None:
        return "-"
    bound = (" budget-bound" if c.lost >= CUT_MATERIAL else ""  # answers the budget cut
             ) + (" context-bound" if c.context_lost >= CUT_MATERIAL else "")  # or the context
    if c.status == "floor":
        return "none (floor)"
    if c.status == "above":  # censored: at the task's range, or where another limit ends it
        return f"≥ {c.range_hi}" + ("" if c.range_end == "spec" else f" ({c.range_end})") + bound
    if c.status == "below":
        return "≤ 1"
    if c.status == "misfit":
        return "misfit (no single fall)"
    assert c.d50 is not None and c.ci_low is not None
    hi = f"> {c.range_hi}" if c.ci_high is None else _g(c.ci_high)
    # a limit past the smallest difficulty the search could try is open there, never below it
    lo = f"< {c.range_lo}" if c.ci_low < c.range_lo else _g(c.ci_low)
    fac = "" if c.factor is None else f" ×{c.factor:.2f}"
    return f"{_g(c.d50)} [{lo}, {hi}]{fac}{bound}"


def entry_d50_text(factor: float | None, n: int | None, above: int | None,
                   high: float | None = None) -> str:
    """An entry's d50 summary: the median ×ID ("≥ 1.18" where tasks above their range decide
    it, "1.02–1.18" between two bounds), with the tasks searched and those censored."""
    if not n:
        return "-"
    if factor is None:
        med = "-"
    elif high is None:
        med = f"≥ {factor:.2f}"
    elif high - factor > 1e-9:
        med = f"{factor:.2f}–{high:.2f}"
    else:
        med = f"{factor:.2f}"
    return f"{med} ({n} tasks, {above or 0} ≥ max)"


def d50_value(c: HorizonCell | None) -> str:
    """The sort value of a d50 cell: its ×ID factor ("≥ max": the range's end ×ID)."""
    if c is None or c.status in ("floor", "misfit"):
        return ""
    if c.status == "above":
        return f"{c.range_hi / c.edge:.6g}" if c.edge else ""
    return "" if c.factor is None else f"{c.factor:.6g}"


def d50_title(c: HorizonCell | None) -> str:
    """The hover text of a d50 cell: the curve, the range and what ended it."""
    if c is None:
        return ""
    cross = ("" if c.fixed_crossing is None
             else f"; the fixed buckets cross the midpoint at {_g(c.fixed_crossing)}")
    if c.status == "misfit":
        acc = ", ".join(f"{_g(d)}: {100 * a:.0f}%" for d, a, _ in c.accuracies)
        cross += f"; no single fall: accuracy by difficulty {acc}"
    return (f"midpoint of {100 * c.top:.1f}% and baseline {100 * c.baseline:.1f}%; {c.items} "
            f"search answers; range up to {c.range_hi} (set by the {c.range_end}){cross}")


def agreement_rows(board: Leaderboard) -> list[dict[str, str]]:
    """For every row of the board with a horizon search: its d50, where the fixed buckets'
    curve crosses the same midpoint, and whether that crossing lies inside the d50 interval."""
    labels = {e.id: e.label for e in board.entries}
    out = []
    for t in board.tasks:
        for r in t.rows:
            c = r.d50
            if c is None:
                continue
            cross = c.fixed_crossing
            if c.status != "measured":
                verdict = {"above": "censored: the search stayed above the midpoint",
                           "below": "censored: below the midpoint at the smallest difficulty",
                           "floor": "no fall: the ID level is not above the baseline",
                           "misfit": "no single fall: the check round contradicts the fitted "
                                     "fall"}[c.status]
            elif cross is None:
                verdict = "no crossing: every fixed bucket stays above the midpoint"
            elif cross <= _first_middle(t) * (1 + 1e-9):
                verdict = ("no crossing: the first fixed bucket is already below the midpoint "
                           "(the fall lies at or before it)")
            else:
                assert c.ci_low is not None
                inside = c.ci_low <= cross and (c.ci_high is None or cross <= c.ci_high)
                verdict = ("agrees" if inside else "disagrees: the crossing lies "
                           + ("below" if cross < c.ci_low else "above") + " the interval")
            out.append({"task": t.task, "model": labels.get(r.entry, r.entry),
                        "d50": d50_text(c),
                        "fixed": "-" if cross is None or c.status != "measured" else _g(cross),
                        "verdict": verdict})
    return out


def _first_middle(t: TaskBoard) -> float:
    """The geometric middle difficulty of the task's first bucket (where ``fall_d50`` puts a
    curve that starts below the midpoint)."""
    b = t.buckets[0]
    top = b.hi if b.hi == b.lo else b.hi - 1
    return math.sqrt(max(b.lo, 1.0) * max(top, 1.0))


def agreement_table(board: Leaderboard) -> str:
    """The markdown table of ``agreement_rows``, with a count of the rows that agree."""
    rows = agreement_rows(board)
    lines = ["| task | model | d50 [95%] ×ID | fixed crossing | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {r['task']} | {r['model']} | {r['d50']} | {r['fixed']} | {r['verdict']} |"
              for r in rows]
    tested = [r for r in rows if r["verdict"].startswith(("agrees", "disagrees"))]
    agree = sum(r["verdict"] == "agrees" for r in tested)
    lines.append("")
    lines.append(f"{agree} of {len(tested)} rows with both a measured d50 and a fixed crossing "
                 "agree.")
    return "\n".join(lines)
