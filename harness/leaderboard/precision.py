"""How a board's rows meet its stated precision: the reach of each row's pooled ID and OOD
intervals, the rows that miss the target (or the items-per-bucket floor), and the rows sized
by ``harness eval --target-ci`` instead, which are judged against their own half-width."""

from __future__ import annotations

from collections.abc import Sequence

from harness.leaderboard.board_file import Precision, TaskRow
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
                     sized=_sized(rows, misses, target, min_per_bucket))


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
