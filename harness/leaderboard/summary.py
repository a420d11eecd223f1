"""What a board says in sentences, generated from its leaderboard.json, never typed.

``summary_md`` writes a board's headline table, its precision statement (each entry against its
own target), where each entry's significant falls lie (``leaderboard/claims``: at the ID edge, in
the exemplars, inside the ID range, or explained by the baselines), and the difficulty + shift
table of every task with exemplars. README and docs carry it between two marker lines::

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
from harness.leaderboard.claims import WORDS, against_baselines, fall_kind
from harness.leaderboard.precision import precision_words
from harness.scoring.floors import FLOOR_RULE


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
    out = ["| model | engine | overall % [95%] (off-floor tasks) | all tasks % | "
           + " | ".join(board.suites)
           + " | ID − OOD gap, pts [95%] (tasks) | floor | 1-answer | tasks |",
           "|---|---|---|---|" + "---|" * len(board.suites) + "---|---|---|---|"]
    for e in board.entries:
        ov, oa = e.overall, e.overall_all
        overall = (f"{_p(ov.value)} [{_p(ov.ci_low)}, {_p(ov.ci_high)}]"
                   if ov.ci_low is not None else _p(ov.value)) + f" ({ov.n_tasks})"
        suites = " | ".join(_p(e.suite_scores[s].value) if s in e.suite_scores else "-"
                            for s in board.suites)
        gap = ("-" if e.gap is None else
               f"{_p(e.gap)} [{_p(e.gap_ci_low)}, {_p(e.gap_ci_high)}] ({e.n_gap_tasks})")
        out.append(f"| {e.label} | {e.card.engine} | {overall} | "
                   f"{'-' if oa is None else _p(oa.value)} | {suites} | {gap} | "
                   f"{e.n_floor} | {e.n_constant} | {e.n_tasks} |")
    return out


def _falls(board: Leaderboard, e: Entry) -> str:
    """Where the entry's significant falls are, by the board's one rule per claim
    (``leaderboard/claims``): at the ID edge, in the exemplars, inside the ID range, or
    explained by the baselines."""
    kinds = {t.task: k for t in board.tasks for r in t.rows
             if r.entry == e.id and (k := fall_kind(r)) is not None}
    parts = [f"{WORDS[k]}: {_names(n for n, x in kinds.items() if x == k)}"
             for k in ("edge", "shift", "inside", "baseline") if k in kinds.values()]
    return f"- {e.label}: " + ("; ".join(parts) if parts else "no fall the rules can place") + "."


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
                out.append(f"| {t.task} | {label[r.entry]} | {_gap(r)}{against_baselines(r)} | no "
                           "matched run | |")
            else:
                out.append(f"| {t.task} | {label[r.entry]} | {_gap(r)}{against_baselines(r)} | "
                           f"{_ci(r.difficulty)}{against_baselines(r, r.difficulty)} "
                           f"| {_ci(r.shift)} |")
    return out


def summary_md(board: Leaderboard) -> str:
    """The board in sentences and tables (see module)."""
    p = board.precision
    no_ex = sorted({t.task for t in board.tasks if t.rows and not t.rows[0].exemplars})
    lines = [*_headline(board), "",
             "Overall and suite scores are means over the tasks off the floor for every entry of "
             "the group (their count in brackets; a suite without one: -), so tasks where no "
             "entry can be told from a constant answerer do not dilute them; the all-task mean "
             "beside them. The gap is a measurement, not a merit: no column ranks by it.", "",
             precision_words(p, {e.id: e.label for e in board.entries}), "",
             f"{FLOOR_RULE[0].upper()}{FLOOR_RULE[1:]}. 1-answer: tasks where one answer "
             "makes up at least 90% of a bucket's or role's answers. The mean gap covers the "
             "tasks measured for every entry of the group.", ""]
    lines += [f"Significant means after {board.correction} correction over every test of its "
              "kind on the board (each task's ID − OOD gap; each task's edge gap). Where a "
              "fall lies, by one rule each (docs/leaderboards.md, \"Claims\"); a task with a "
              "significant gap and none of these is not placed:", ""]
    lines += [_falls(board, e) for e in board.entries]
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
