"""How a leaderboard shows registered analyses and gaps, read from their registrations (their
``BoardInfo``: title, headline position, better direction, aggregation over tasks), never from
lists of its own: the columns and headers of the tables and pages, and an entry's value.

Only the harness's own registrations are read (a plugin's analysis or gap gets the defaults), so a
board does not depend on what is installed where it is built.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from harness.analyses.registry import board_info as analysis_info
from harness.board_info import BoardInfo, column_order
from harness.gaps.registry import board_info as gap_info
from harness.leaderboard.board_file import Leaderboard, TaskBoard, TaskRow
from harness.scoring.stats import r10


def analysis_columns(board: Leaderboard) -> list[str]:
    """Analyses shown as columns: the headline ones present (in their declared order), then any
    others, by name."""
    return column_order((n for e in board.entries for n in e.analyses), analysis_info)


def gap_columns(board: Leaderboard) -> list[str]:
    """Registered gaps shown as columns after the built-in three (which have columns of their
    own): the headline ones present (in their declared order), then any others, by name."""
    return column_order((n for e in board.entries for n in e.gaps), gap_info)


def task_gap_columns(task: TaskBoard) -> list[str]:
    """The columns of ``gap_columns`` that a task's rows have."""
    return column_order((n for r in task.rows for n in r.gaps), gap_info)


def better(name: str) -> str:
    """``low`` or ``high``: the direction in which an analysis's values are better."""
    return analysis_info(name).better


def arrow(name: str) -> str:
    """The direction mark of an analysis column's header."""
    return analysis_info(name).arrow()


def analysis_title(name: str) -> str:
    """Column title of an analysis."""
    return analysis_info(name).column_title(name)


def gap_better(name: str) -> str:
    """``low`` or ``high``: the direction in which a gap's values are better."""
    return gap_info(name).better


def gap_arrow(name: str) -> str:
    """The direction mark of a gap column's header."""
    return gap_info(name).arrow()


def gap_title(name: str) -> str:
    """Column title of a gap."""
    return gap_info(name).column_title(name)


def gap_head(name: str) -> str:
    """A gap column's header: its title and direction mark."""
    return " ".join(filter(None, (gap_title(name), gap_arrow(name))))


def macro_mean(xs: Sequence[float | None]) -> float | None:
    """The mean of the values that are not None (None when there are none)."""
    vals = [x for x in xs if x is not None]
    return r10(math.fsum(vals) / len(vals)) if vals else None


def role_ratio(rows: Sequence[TaskRow]) -> float | None:
    """Mean OOD accuracy over mean ID accuracy of the rows that have both roles."""
    both = [r for r in rows if r.id_accuracy is not None and r.ood_accuracy is not None]
    id_b = macro_mean([r.id_accuracy for r in both])
    ood_b = macro_mean([r.ood_accuracy for r in both])
    return r10(ood_b / id_b) if id_b and ood_b is not None else None


def board_value(info: BoardInfo, rows: Sequence[TaskRow], values: Sequence[float | None]
                ) -> float | None:
    """An entry's value of a registered analysis or gap, as its ``board`` metadata says, from
    the rows of the tasks it covers and its per-task values there."""
    return role_ratio(rows) if info.board == "role_ratio" else macro_mean(values)


def values_by_name(cells: Iterable[tuple[str, TaskRow, float | None]]
                   ) -> dict[str, tuple[list[TaskRow], list[float | None]]]:
    """Per name of a registered analysis or gap (sorted), the rows where it has a value and
    those values (a name without any value is kept, with none)."""
    out: dict[str, tuple[list[TaskRow], list[float | None]]] = {}
    for name, row, value in cells:
        rs, vs = out.setdefault(name, ([], []))
        if value is not None:
            rs.append(row)
            vs.append(value)
    return dict(sorted(out.items()))
