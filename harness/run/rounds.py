"""``harness eval --target-ci H``: items per bucket added in rounds until the intervals are tight.

**The rule.** Round ``r`` runs every task at ``--limit-per-bucket L_r`` with ``L_1`` = the first
round's size and ``L_{r+1} = 2·L_r``, capped at ``--limit-per-bucket`` (default 1000). After a
round the run stops when, for every task, template and condition, pooled ID and pooled OOD
accuracy are within ±H: the farther end of its 95% interval (the Wilson interval results.json
reports) lies at most H from the estimate. It also stops when a round added no item (every bucket
used up) or the cap was run. Items at a limit are a prefix of the items at any larger limit, and
earlier rounds' responses come from the response cache, so a round costs only its new items;
the finished folder is exactly a plain run at the last round's limit (which results.json
records), reproducible with ``--limit-per-bucket`` alone, and the same seed stops at the same
round. ``rounds.json`` beside results.json lists each round's limit and widest reach.

**Coverage.** Stopping when the interval is narrow is data-dependent, so the reported interval's
coverage is not the fixed-n one. ``tests/unit/test_target_ci.py`` computes it exactly (a dynamic
program over the binomial counts of successive rounds) and docs/statistics.md tabulates it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from harness.config import RunConfig
from harness.errors import HarnessError
from harness.run.results import Results
from harness.run.rundir import owner, run_identity
from harness.scoring.intervals import reach

DEFAULT_CAP = 1000  # items per bucket at most when --limit-per-bucket is not given
FIRST_ROUND = 10  # items per bucket in the first round
ROUNDS_NAME = "rounds.json"  # the rounds of a --target-ci run, beside results.json


@dataclass(frozen=True)
class Round:
    """One finished round."""

    limit: int  # items per bucket asked for
    samples: int  # samples scored over every task
    reach: float  # the widest reach of any pooled role interval (0 without samples)
    widest: str  # which task / template / role has it


def widest(res: Results) -> tuple[float, str, int]:
    """The widest reach over every pooled role of every task/template/condition, where it is,
    and the number of samples. A role without samples is left out: its condition answers none
    of its items (the matched-exemplar control has no ID items; an ID-only task no OOD ones),
    and more items per bucket would not give it any."""
    best, where, n = 0.0, "", 0
    for t in res.tasks:
        for tpl in t.templates:
            n += tpl.n
            for role in tpl.roles:
                if role.n == 0:
                    continue
                h = reach(role.accuracy, role.ci_low, role.ci_high)
                r = 1.0 if h is None else h  # no estimate: as wide as an interval can be
                if r > best:
                    cond = f" [{tpl.condition}]" if tpl.condition else ""
                    best, where = r, f"{t.task} {tpl.template}{cond} {role.role}"
    return best, where, n


def check_target(target: float, cap: int | None, first: int) -> int:
    """The cap to use; a one-line error for a target outside (0, 0.5) or a first round that
    is not positive."""
    if not 0.0 < target < 0.5:
        raise HarnessError(f"--target-ci must be in (0, 0.5) (a half-width as a fraction, e.g. "
                           f"0.05 for +-5 points), got {target}")
    if first < 1:
        raise HarnessError(f"--first-round must be at least 1, got {first}")
    return cap if cap is not None else DEFAULT_CAP


def _ours(cfg: RunConfig) -> bool:
    """Whether ``cfg.output_dir`` holds rounds of this same run (other limits only)."""
    theirs = owner(cfg.output_dir)
    if not theirs or not (cfg.output_dir / ROUNDS_NAME).is_file():
        return False
    mine = run_identity(cfg)
    return {k: v for k, v in theirs.items() if k != "limit_per_bucket"} == {
        k: v for k, v in mine.items() if k != "limit_per_bucket"}


def run_rounds(cfg: RunConfig, target: float, first: int,
               run: Callable[[RunConfig, bool], Results], overwrite: bool = False,
               on_round: Callable[[Round], None] | None = None) -> tuple[Results, list[Round]]:
    """Run ``cfg`` in rounds (see module); ``run(config, overwrite)`` evaluates one round
    into ``cfg.output_dir``, replacing the previous round (a rerun of the same command resumes;
    another run's folder needs ``overwrite``). ``cfg.limit_per_bucket`` is the cap."""
    cap = check_target(target, cfg.limit_per_bucket, first)
    if not cfg.use_cache:
        raise HarnessError("--target-ci needs the response cache (each round reuses the "
                           "previous rounds' responses): drop --no-cache")
    rounds: list[Round] = []
    limit = min(first, cap)
    replace = overwrite or _ours(cfg)
    plain = {"horizon": False, "horizon_items": None}  # the search runs once, at the end
    while True:
        res = run(cfg.model_copy(update={"limit_per_bucket": limit, **plain}), replace)
        replace = True  # the folder holds this run's previous round now
        worst, where, n = widest(res)
        rounds.append(Round(limit, n, round(worst, 4), where))
        if on_round:
            on_round(rounds[-1])
        used_up = len(rounds) > 1 and n == rounds[-2].samples
        if worst <= target or used_up or limit >= cap or res.failed:
            break
        limit = min(2 * limit, cap)
    if cfg.horizon and not res.failed:  # the fixed answers all come from the cache now
        res = run(cfg.model_copy(update={"limit_per_bucket": limit}), True)
    out = cfg.output_dir / ROUNDS_NAME
    out.write_text(json.dumps({
        "target_ci": target, "cap": cap, "first_round": first,
        "stopped": ("target met" if rounds[-1].reach <= target else
                    "a task failed" if res.failed else
                    "every item used" if used_up else "cap reached"),
        "rounds": [r.__dict__ for r in rounds]}, indent=1) + "\n", encoding="utf-8")
    return res, rounds
