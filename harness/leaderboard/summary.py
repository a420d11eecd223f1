"""What a board says in sentences, generated from its leaderboard.json, never typed.

``summary_md`` writes a board's headline table, its precision statement, which tasks fall at the
ID edge and which only inside the ID range, and the difficulty + shift table of every task with
exemplars. README and docs carry it between two marker lines::

    <!-- summary:BOARD:begin -->
    ...
    <!-- summary:BOARD:end -->

``harness leaderboard summary BOARD --into FILE`` rewrites the block, and a test checks that
every committed block equals what the committed board gives, so no sentence can contradict it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from harness.files import write_blocks
from harness.leaderboard.board_file import Entry, Leaderboard, Split, TaskRow


def _p(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def _ci(x: Split | None) -> str:
    return "-" if x is None else f"{_p(x.value)} [{_p(x.ci_low)}, {_p(x.ci_high)}]"


def _gap(r: TaskRow) -> str:
    if r.gap is None or r.gap_ci_low is None or r.gap_ci_high is None:
        return r.status
    return f"{_p(r.gap)} [{_p(r.gap_ci_low)}, {_p(r.gap_ci_high)}]"


def _names(tasks: Iterable[str]) -> str:
    names = sorted({t.split("/", 1)[-1] for t in tasks})
    return ", ".join(names) if names else "none"


def _headline(board: Leaderboard) -> list[str]:
    out = ["| model | engine | overall % [95%] | "
           + " | ".join(board.suites)
           + " | ID − OOD gap, pts [95%] (tasks) | floor | 1-answer | tasks |",
           "|---|---|---|" + "---|" * len(board.suites) + "---|---|---|---|"]
    for e in board.entries:
        ov = e.overall
        overall = (f"{_p(ov.value)} [{_p(ov.ci_low)}, {_p(ov.ci_high)}]"
                   if ov.ci_low is not None else _p(ov.value))
        suites = " | ".join(_p(e.suite_scores[s].value) if s in e.suite_scores else "-"
                            for s in board.suites)
        gap = ("-" if e.gap is None else
               f"{_p(e.gap)} [{_p(e.gap_ci_low)}, {_p(e.gap_ci_high)}] ({e.n_gap_tasks})")
        out.append(f"| {e.label} | {e.card.engine} | {overall} | {suites} | {gap} | "
                   f"{e.n_floor} | {e.n_constant} | {e.n_tasks} |")
    return out


def _edges(board: Leaderboard, e: Entry) -> str:
    """Where the entry's measured gaps happen: at the ID edge, or only inside the ID range."""
    by_task = {t.task: r for t in board.tasks for r in t.rows if r.entry == e.id}
    at_edge = [n for n, r in by_task.items() if r.edge is not None and r.edge.ci_low > 0]
    inside = [n for n, r in by_task.items()
              if r.gap is not None and r.gap_ci_low is not None and r.gap_ci_low > 0
              and r.edge is not None and r.edge.ci_low <= 0]
    tasks = "task" if len(at_edge) == 1 else "tasks"
    return (f"- {e.label}: a significant fall at the ID edge (last ID bucket − first OOD "
            f"bucket, 95% interval above 0) on {len(at_edge)} {tasks} ({_names(at_edge)}); a "
            f"significant pooled gap with no significant fall at the edge on {len(inside)} "
            f"({_names(inside)}): accuracy that falls inside the ID range.")


def _split_table(board: Leaderboard) -> list[str]:
    label = {e.id: e.label for e in board.entries}
    out = ["| task | model | gap = | difficulty + | shift (pts, 95%) |", "|---|---|---|---|---|"]
    for t in board.tasks:
        for r in t.rows:
            if not r.exemplars:
                continue
            if r.status != "measured":
                out.append(f"| {t.task} | {label[r.entry]} | {r.status} | | |")
            elif r.gap is None:  # e.g. a task that evaluates one role (its own conditions)
                out.append(f"| {t.task} | {label[r.entry]} | no ID − OOD gap | | |")
            elif r.difficulty is None or r.shift is None:
                out.append(f"| {t.task} | {label[r.entry]} | {_gap(r)} | no matched run | |")
            else:
                out.append(f"| {t.task} | {label[r.entry]} | {_gap(r)} | {_ci(r.difficulty)} "
                           f"| {_ci(r.shift)} |")
    return out


def summary_md(board: Leaderboard) -> str:
    """The board in sentences and tables (see module)."""
    p = board.precision
    no_ex = sorted({t.task for t in board.tasks if t.rows and not t.rows[0].exemplars})
    lines = [*_headline(board), "",
             f"Precision: {p.tasks_meeting} of {p.task_rows} task rows have pooled ID and OOD "
             f"accuracy within ±{100 * p.target:.0f} points (95%, the farther end of the "
             "interval)" + (" or, for rows sized with --target-ci, within their own half-width"
                            if p.sized else "")
             + ("" if p.worst is None else
                f"; the widest reaches ±{100 * p.worst:.2f} ({p.worst_row})") + "."
             + "".join(f" Sized with --target-ci (judged against it): {s}." for s in p.sized),
             "",
             "Floor: pooled ID accuracy not above its baseline, the best constant answer's "
             "score on the same items. 1-answer: tasks where one answer makes up at least 90% "
             "of a bucket's or role's answers. The mean gap covers the tasks measured for every "
             "entry of the group.", ""]
    lines += [_edges(board, e) for e in board.entries]
    lines += ["", f"Tasks without exemplars ({len(no_ex)}; their gap is a difficulty gap, with "
              f"no exemplar shift to control): {_names(no_ex)}.", "",
              "Gap = difficulty + shift, from the matched-exemplar control (OOD items answered "
              "again with exemplars from their own bucket):", "", *_split_table(board)]
    return "\n".join(lines) + "\n"


def blocks(text: str) -> list[tuple[str, str]]:
    """Every (board name, block text) a file carries between summary markers."""
    return [(m.group(1), m.group(2)) for m in re.finditer(
        r"<!-- summary:([\w.-]+):begin -->\n(.*?)<!-- summary:\1:end -->", text, re.S)]


def write_into(path: Path, name: str, summary: str) -> None:
    """Replace the ``name`` block of ``path`` with ``summary`` (one-line error without one)."""
    write_blocks(path, {f"summary:{name}": summary}, begin="begin")
