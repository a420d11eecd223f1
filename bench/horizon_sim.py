"""The horizon search on simulated responders (issue 34): coverage of the true d50 by its 95%
interval in every setting, and the answers a fixed design needs for the same precision.

    .venv/bin/python bench/horizon_sim.py                      # 400 responders per setting
    .venv/bin/python bench/horizon_sim.py --write-doc docs/statistics.md
    .venv/bin/python bench/horizon_sim.py --budget 20 --id-items 8 --runs 200  # a sized row

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
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import ROOT, machine, write_doc, write_result  # noqa: E402
from harness.scoring.horizon_sim import (  # noqa: E402
    ID_ITEMS,
    SETTINGS,
    Coverage,
    coverage,
    fixed_width,
    table,
)

BUDGET = 200  # search answers per run: the horizon key's default
FIXED_POINTS = 8  # difficulties of the fixed design, log-spaced over the search range
FIXED_SIZES = (10, 25, 50, 100, 200)  # items per difficulty tried for the fixed design
FIXED_RUNS = 100  # responders per fixed-design size


def budget_rows(rows: list[Coverage]) -> list[dict[str, Any]]:
    """For each measured setting: the adaptive search's answers and median width, and the
    fewest fixed-design answers whose median width is at most as narrow."""
    out = []
    for c in rows:
        if c.median_width is None:
            continue
        widths = {n: fixed_width(c.setting, n, FIXED_POINTS, FIXED_RUNS) for n in FIXED_SIZES}
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=400, help="responders per setting")
    ap.add_argument("--write-doc", type=Path, help="docs file with the marker blocks")
    ap.add_argument("--budget", type=int, default=BUDGET,
                    help="search answers per run (not the default: coverage alone)")
    ap.add_argument("--id-items", type=int, default=ID_ITEMS,
                    help="items per ID bucket of the simulated fixed run")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows = []
    for s in SETTINGS:
        rows.append(coverage(s, args.runs, budget=args.budget, id_items=args.id_items))
        print(f"{s.name}: {100 * rows[-1].rate:.1f}%", flush=True)
    small = args.budget != BUDGET or args.id_items != ID_ITEMS
    budget = [] if small else budget_rows(rows)
    cov_md, budget_md = table(rows), budget_table(budget)
    print(cov_md, "\n", budget_md, sep="\n")
    name = f"horizon_sim_budget{args.budget}" if small else "horizon_sim"
    write_result(name, {"budget_per_run": args.budget, "id_items": args.id_items,
        "machine": machine(), "runs": args.runs, "seconds": time.perf_counter() - t0,
        "command": "bench/horizon_sim.py " + " ".join(sys.argv[1:]),
        "coverage": [{"setting": c.setting.name, "runs": c.runs, "held": c.held,
                      "missed": list(c.missed), "statuses": c.statuses,
                      "mean_items": c.mean_items, "median_width": c.median_width}
                     for c in rows],
        "budget": budget, "coverage_table": cov_md, "budget_table": budget_md,
    })
    if args.write_doc:
        blocks = ({f"horizon-coverage-budget{args.budget}": cov_md} if small else
                  {"horizon-coverage": cov_md, "horizon-budget": budget_md})
        write_doc(ROOT / args.write_doc if not args.write_doc.is_absolute() else args.write_doc,
                  blocks)


if __name__ == "__main__":
    main()
