"""The horizon search on simulated responders (issues 34, 49): coverage of the true d50 by its
95% interval in every setting of the grid, on departures the grid does not contain and on the
documented limits, and the answers a fixed design needs for the same precision.

    .venv/bin/python bench/horizon_sim.py                      # 400 responders per setting
    .venv/bin/python bench/horizon_sim.py --write-doc docs/statistics.md
    .venv/bin/python bench/horizon_sim.py --budget 20 --id-items 8 --runs 200  # a sized row
    .venv/bin/python bench/horizon_sim.py --cost-only --write-doc docs/statistics.md  # before/after
    .venv/bin/python bench/horizon_sim.py --limits-only --write-doc docs/statistics.md  # limits

Settings run in ``--jobs`` processes (default 2), one setting a task; the results do not depend
on how many.

No model runs: each responder answers with the known accuracy of its setting
(``harness/scoring/horizon_sim.py``). Writes ``bench/results/horizon_sim.json`` (every setting's
coverage, the runs that missed, the budget comparison); ``--write-doc`` puts the two tables
between the ``horizon-coverage`` and ``horizon-budget`` markers of the doc.
``tests/unit/test_horizon_coverage.py`` replays part of the runs and checks the doc against
the file. ``--budget N`` (with ``--id-items``) measures coverage alone for a smaller search, as
a sized board row runs it: ``bench/results/horizon_sim_budget<N>.json`` and the
``horizon-coverage-budget<N>`` block.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

# one BLAS thread a process, set before numpy loads: the posterior's dot products in two
# processes with two threads each spin-waited on this 2-core machine (over 5x slower)
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, os.environ.get("BENCH_THREADS", "1"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, machine, write_doc, write_result  # noqa: E402
from harness.scoring.horizon_sim import (  # noqa: E402
    ID_ITEMS,
    LIMITS,
    SETTINGS,
    UNSEEN,
    Coverage,
    Setting,
    coverage,
    fixed_width,
    table,
)

UNSEEN_RUNS = 200  # responders per setting off the grid (and per documented limit)

BUDGET = 200  # search answers per run: the horizon key's default
FIXED_POINTS = 8  # difficulties of the fixed design, log-spaced over the search range
FIXED_SIZES = (10, 25, 50, 100, 200)  # items per difficulty tried for the fixed design
FIXED_RUNS = 100  # responders per fixed-design size


def _cover(job: tuple[Setting, int, int, int]) -> Coverage:
    s, runs, budget, id_items = job
    return coverage(s, runs, budget=budget, id_items=id_items)


def _fixed(job: tuple[Setting, int]) -> float | None:
    return fixed_width(job[0], job[1], FIXED_POINTS, FIXED_RUNS)


def budget_rows(rows: list[Coverage], pool: Any) -> list[dict[str, Any]]:
    """For each measured setting: the adaptive search's answers and median width, and the
    fewest fixed-design answers whose median width is at most as narrow."""
    out = []
    measured = [c for c in rows if c.median_width is not None and c.setting.monotone]
    jobs = [(c.setting, n) for c in measured for n in FIXED_SIZES]
    got = dict(zip([(c.setting.name, n) for c in measured for n in FIXED_SIZES],
                   pool.map(_fixed, jobs), strict=True))
    for c in measured:
        widths = {n: got[(c.setting.name, n)] for n in FIXED_SIZES}
        enough = [n for n in FIXED_SIZES if (w := widths[n]) is not None and w <= c.median_width]
        need = FIXED_POINTS * enough[0] if enough else None
        out.append({"setting": c.setting.name, "adaptive_items": c.mean_items,
                    "adaptive_width": c.median_width,
                    "fixed_widths": {str(n): widths[n] for n in FIXED_SIZES},
                    "fixed_items_needed": need,
                    "ratio": None if need is None or c.mean_items == 0
                    else need / c.mean_items})
    return out


def budget_table(rows: list[dict[str, Any]]) -> str:
    """The docs table of the budget comparison."""
    sizes = " | ".join(f"fixed {FIXED_POINTS}×{n}" for n in FIXED_SIZES)
    out = [f"| setting | adaptive answers (mean) | adaptive width ×d50 | {sizes} "
           "| fixed answers for the same width | ratio |",
           "|---" * (5 + len(FIXED_SIZES)) + "|"]
    for r in rows:
        fixed = " | ".join("open" if (w := r["fixed_widths"][str(n)]) is None
                           else f"{math.exp(w):.2f}" for n in FIXED_SIZES)
        need = (f"> {FIXED_POINTS * FIXED_SIZES[-1]}" if r["fixed_items_needed"] is None
                else str(r["fixed_items_needed"]))
        ratio = ("—" if r["ratio"] is None else f"{r['ratio']:.1f}×")
        out.append(f"| {r['setting']} | {r['adaptive_items']:.0f} "
                   f"| {math.exp(r['adaptive_width']):.2f} | {fixed} | {need} | {ratio} |")
    return "\n".join(out)


BEFORE = ROOT / "bench" / "results" / "horizon_sim_before49.json"  # the search before issue 49


def cost_table(before: dict[str, Any], after: dict[str, Any]) -> str:
    """What robustness costs: for each setting both files ran, the statement's coverage, the
    search answers (mean) and the median width, before and after."""
    old = {r["setting"]: r for r in before["coverage"]}
    out = ["| setting | holds before | holds now | answers before | answers now "
           "| width ×d50 before | width ×d50 now |", "|---" * 7 + "|"]

    def width(r: dict[str, Any]) -> str:
        return "—" if r["median_width"] is None else f"{math.exp(r['median_width']):.2f}"

    for r in after["coverage"]:
        if (o := old.get(r["setting"])) is None:
            continue
        out.append(f"| {r['setting']} | {100 * o['held'] / o['runs']:.1f}% "
                   f"| {100 * r['held'] / r['runs']:.1f}% | {o['mean_items']:.0f} "
                   f"| {r['mean_items']:.0f} | {width(o)} | {width(r)} |")
    return "\n".join(out)


def limits_only(jobs: int, doc: Path | None) -> None:
    """The limits again, their rows, table and cost recorded under ``limits_run`` of the
    existing ``horizon_sim.json`` (every other number in it stays the full run's: the
    settings are seeded, so a full run gives the same rows)."""
    import json
    from multiprocessing import Pool

    path = ROOT / "bench" / "results" / "horizon_sim.json"
    data = json.loads(path.read_text())
    t0 = time.perf_counter()
    with Pool(jobs) as pool:
        limits = pool.map(_cover, [(s, UNSEEN_RUNS, BUDGET, ID_ITEMS) for s in LIMITS])
    data["limits"] = [c.record() for c in limits]
    data["limits_table"] = limits_md = table(limits)
    data["limits_run"] = {"machine": machine(), "seconds": time.perf_counter() - t0,
                          "command": "bench/horizon_sim.py --limits-only"}
    print(limits_md)
    write_result("horizon_sim", data)
    if doc:
        write_doc(ROOT / doc if not doc.is_absolute() else doc, {"horizon-limits": limits_md})


def main() -> None:
    from multiprocessing import Pool

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=400, help="responders per setting")
    ap.add_argument("--write-doc", type=Path, help="docs file with the marker blocks")
    ap.add_argument("--budget", type=int, default=BUDGET,
                    help="search answers per run (not the default: coverage alone)")
    ap.add_argument("--id-items", type=int, default=ID_ITEMS,
                    help="items per ID bucket of the simulated fixed run")
    ap.add_argument("--jobs", type=int, default=2, help="processes")
    ap.add_argument("--cost-only", action="store_true",
                    help="only write the before/after table from the two result files")
    ap.add_argument("--limits-only", action="store_true",
                    help="run the limits again (a row added), keeping the rest of the file")
    args = ap.parse_args()
    if args.limits_only:
        limits_only(args.jobs, args.write_doc)
        return
    if args.cost_only:
        import json

        table_md = cost_table(json.loads(BEFORE.read_text()),
                              json.loads((ROOT / "bench/results/horizon_sim.json").read_text()))
        print(table_md)
        if args.write_doc:
            write_doc(ROOT / args.write_doc, {"horizon-cost": table_md})
        return
    t0 = time.perf_counter()
    small = args.budget != BUDGET or args.id_items != ID_ITEMS
    with Pool(args.jobs) as pool:
        rows = pool.map(_cover, [(s, args.runs, args.budget, args.id_items) for s in SETTINGS])
        off = [] if small else pool.map(_cover, [(s, UNSEEN_RUNS, args.budget, args.id_items)
                                                 for s in UNSEEN + LIMITS])
        budget = [] if small else budget_rows(rows, pool)
    unseen, limits = off[:len(UNSEEN)], off[len(UNSEEN):]
    cov_md, budget_md = table(rows), budget_table(budget)
    unseen_md, limits_md = table(unseen), table(limits)
    print(cov_md, unseen_md, limits_md, budget_md, sep="\n\n")
    name = f"horizon_sim_budget{args.budget}" if small else "horizon_sim"
    write_result(name, {"budget_per_run": args.budget, "id_items": args.id_items,
        "machine": machine(), "runs": args.runs, "seconds": time.perf_counter() - t0,
        "command": "bench/horizon_sim.py " + " ".join(sys.argv[1:]),
        "coverage": [c.record() for c in rows],
        "unseen": [c.record() for c in unseen], "limits": [c.record() for c in limits],
        "budget": budget, "coverage_table": cov_md, "budget_table": budget_md,
        "unseen_table": unseen_md, "limits_table": limits_md,
    })
    if args.write_doc:
        blocks = ({f"horizon-coverage-budget{args.budget}": cov_md} if small else
                  {"horizon-coverage": cov_md, "horizon-budget": budget_md,
                   "horizon-unseen": unseen_md, "horizon-limits": limits_md})
        write_doc(ROOT / args.write_doc if not args.write_doc.is_absolute() else args.write_doc,
                  blocks)


if __name__ == "__main__":
    main()
