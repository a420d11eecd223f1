"""How a board's rows meet its stated precision: the reach of each row's pooled ID and OOD
intervals, the rows that miss the target (or the items-per-bucket floor), and the rows sized
by ``harness eval --target-ci`` instead, which are judged against their own half-width."""

from __future__ import annotations

import re
from collections.abc import Sequence

from harness.leaderboard.board_file import EntryPrecision, Precision, TaskRow
from harness.leaderboard.plan import evaluated_buckets
from harness.run.results import TaskResult
from harness.scoring.intervals import reach
from harness.scoring.stats import r10

Row = tuple[str, str, TaskRow, TaskResult, float | None]  # entry, task, row, result, --target-ci


def precision(rows: Sequence[Row], target: float, min_per_bucket: int) -> Precision:
    """The board's precision statement over ``rows`` (entry order, then task order)."""
    misses = {(e, n): why for e, n, r, t, sized in rows
              if (why := _short(r, t, target, min_per_bucket, sized))}
    reaches = [(h, f"{e} {n} {role}") for e, n, _, t, _ in rows
               for role, h in _reaches(t).items()]
    worst = max(reaches, default=None)
    return Precision(target=target, min_per_bucket=min_per_bucket,
                     tasks_meeting=len(rows) - len(misses), task_rows=len(rows),
                     short=[f"{e} {n}: {why}" for (e, n), why in misses.items()],
                     worst=None if worst is None else r10(worst[0]),
                     worst_row=None if worst is None else worst[1],
                     sized=_sized(rows, misses, target, min_per_bucket),
                     entries=_per_entry(rows, misses, target, min_per_bucket))


def _per_entry(rows: Sequence[Row], misses: dict[tuple[str, str], str], target: float,
               min_per_bucket: int) -> list[EntryPrecision]:
    """Each entry's target and the rows meeting it: the board's target, or for rows sized with
    ``--target-ci`` their own half-width (an entry with both kinds of rows gets one line each)."""
    groups: dict[tuple[str, float | None], list[str]] = {}
    for e, n, _, _, sized in rows:
        groups.setdefault((e, sized), []).append(n)
    return [EntryPrecision(entry=e, target=target if h is None else h,
                           min_per_bucket=min_per_bucket if h is None else 0, sized=h is not None,
                           meeting=sum((e, n) not in misses for n in names), rows=len(names))
            for (e, h), names in groups.items()]


_TITLE_TARGET = re.compile(r"(?:±|\+-|\+/-)\s*(\d+(?:\.\d+)?)\s*(?:pts|points|%)?")


def title_conflict(title: str, p: Precision) -> str | None:
    """Why a board's title may not state the precision it states (None: it may): a title that
    names one half-width (``±10 pts``) where an entry is judged against another."""
    said = {float(m.group(1)) / 100 for m in _TITLE_TARGET.finditer(title)}
    other = sorted({x.target for x in p.entries if all(abs(x.target - s) > 1e-9 for s in said)})
    if not said or not other:
        return None
    return (f"it names ±{', ±'.join(f'{100 * s:g}' for s in sorted(said))} pts, but some "
            f"entries are judged against ±{', ±'.join(f'{100 * t:g}' for t in other)} pts; "
            "leave the precision out of the title (the board states each entry's own)")


def target_words(p: EntryPrecision) -> str:
    """An entry's target in a few words: "±10 pts, ≥ 30 items per bucket" or "±25 pts (sized
    with --target-ci)"."""
    return (f"±{100 * p.target:g} pts" + (" (sized with --target-ci)" if p.sized
                                          else f", ≥ {p.min_per_bucket} items per bucket"))


def entry_mark(p: Precision, entry: str) -> str:
    """An entry's precision as a row mark: "±10: 30/34" (each of its targets)."""
    return "; ".join(f"±{100 * x.target:g}: {x.meeting}/{x.rows}"
                     for x in p.entries if x.entry == entry)


def precision_words(p: Precision, labels: dict[str, str]) -> str:
    """The board's precision statement, naming each entry's own target (``labels``: entry id →
    display name); every surface of the board says it in these words."""
    per = "; ".join(f"{labels.get(x.entry, x.entry)}: {x.meeting} of {x.rows} task rows within "
                    f"{target_words(x)}" for x in p.entries)
    worst = ("" if p.worst is None else
             f" The widest reach is ±{100 * p.worst:.2f} points ({p.worst_row}).")
    return ("Precision (pooled ID and OOD accuracy, 95%, the farther end of the interval), "
            f"each entry against its own target: {per}.{worst}")


def _evaluated(t: TaskResult) -> dict[str, str]:
    """Label → role of the buckets a task evaluates: every bucket, or the union of its few-shot
    conditions' ``evaluate`` lists (which leave the other buckets empty by design)."""
    conds = (t.spec.get("fewshot") or {}).get("conditions") or []
    wanted = evaluated_buckets(c.get("evaluate") for c in conds) if conds else None
    rep = t.templates[0].buckets if t.templates else []
    return {b.bucket: b.role for b in rep if wanted is None or b.bucket in wanted}


def _reaches(t: TaskResult) -> dict[str, float]:
    """How far the pooled ID and OOD accuracy intervals of a task's primary report reach from
    their estimates (the farther end of each Wilson 95% interval, docs/statistics.md), over the
    roles its buckets evaluate."""
    rep = t.templates[0] if t.templates else None
    roles = set(_evaluated(t).values())
    out: dict[str, float] = {}
    for r in rep.roles if rep else []:
        h = reach(r.accuracy, r.ci_low, r.ci_high)
        if r.role in roles and h is not None:
            out[r.role] = h
    return out


def _short(r: TaskRow, t: TaskResult, target: float, min_per_bucket: int,
           sized: float | None = None) -> str | None:
    """Which precision target a row misses, over the buckets its task evaluates (a role it
    does not evaluate, such as OOD in an ID-only task, is not asked for; an evaluated role
    without items misses it). A row ``sized`` by ``--target-ci`` is judged against that
    half-width alone: the rounds chose its items per bucket."""
    if sized is not None:
        target, min_per_bucket = sized, 0
    why = []
    evaluated = _evaluated(t)
    reaches = _reaches(t)
    h = max([reaches.get(role, 0.0) for role in set(evaluated.values())], default=0.0)
    if h > target + 1e-12:
        why.append(f"±{100 * h:.2f} pts (n_ID={r.n_id}, n_OOD={r.n_ood})")
    small = min((b.n for b in r.buckets if b.label in evaluated), default=0)
    if small < min_per_bucket:
        why.append(f"{small} items in its smallest bucket")
    return "; ".join(why) or None


def _sized(rows: Sequence[Row], misses: dict[tuple[str, str], str], target: float,
           min_per_bucket: int) -> list[str]:
    """One line per entry with rows sized by ``--target-ci``: their half-width against the
    board's stated target, and how many meet it."""
    out = []
    for e in dict.fromkeys(e for e, *_ in rows):
        mine = {n: h for e_, n, _, _, h in rows if e_ == e and h is not None}
        if not mine:
            continue
        meet = sum((e, n) not in misses for n in mine)
        half = "/".join(f"±{100 * h:g}" for h in sorted(set(mine.values())))
        out.append(f"{e}: {len(mine)} task rows sized with --target-ci to {half} pts (95%) "
                   f"instead of ±{100 * target:g} pts and {min_per_bucket} items per bucket; "
                   f"{meet} of {len(mine)} meet it")
    return out
