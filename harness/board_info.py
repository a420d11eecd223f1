"""How a leaderboard shows a registered number: the one definition that analyses and gaps share.

A registered analysis (``analyses/registry``) or gap (``gaps/registry``) declares, with
its code, a column title, whether it is a headline column and where, the direction in which its
values are better, and how an entry's value is made from its per-task values. The leaderboard
reads these (``leaderboard/tables``, ``leaderboard/aggregate``) and keeps no list of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

Better = Literal["high", "low", "none"]  # "none": a measurement, not a merit (never ranked)
# how an entry's value is made from its tasks: "mean" of the per-task values; "role_ratio": the
# mean OOD accuracy over the mean ID accuracy of the tasks (gaps: those where it is measured)
BoardAggregate = Literal["mean", "role_ratio"]


@dataclass(frozen=True, kw_only=True)
class BoardInfo:
    """The leaderboard metadata of a registered number."""

    title: str | None = None  # column title (None: the registered name)
    headline: int | None = None  # position among the headline columns; None: not one
    better: Better = "high"  # the direction in which values are better ("none": neither)
    board: BoardAggregate = "mean"  # how an entry's value comes from its tasks' values

    def column_title(self, name: str) -> str:
        """The title of the column of ``name`` (its declared title, else the name)."""
        return self.title or name

    def arrow(self) -> str:
        """The direction mark of a column header: ↑ (higher is better), ↓, or none."""
        return {"low": "↓", "high": "↑"}.get(self.better, "")


def column_order(names: Iterable[str], info: Callable[[str], BoardInfo]) -> list[str]:
    """``names`` as columns: the headline ones in their declared order (ties by name), then the
    others by name (``info``: a name's metadata)."""
    present = set(names)
    head = sorted((n for n in present if info(n).headline is not None),
                  key=lambda n: (info(n).headline or 0, n))
    return head + sorted(present - set(head))
