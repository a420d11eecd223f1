"""The board's measured cost, per task and engine, as a Markdown table for bench/RESULTS.md.

Reads the cost table (default: the shipped ``harness/leaderboard/costs.json``, which
``scripts/build_leaderboard.sh`` fills from the board's own runs) and prints, per task, the prompts
and CPU seconds each model's run measured, CPU milliseconds per prompt, and the load average the
run saw; then each model's total in core-hours over the tasks it has, and the board's tasks
(``--tasks``, default the four suites) it lacks.

    .venv/bin/python bench/cost_table.py [--costs FILE] [--tasks SUITES] [--into bench/RESULTS.md]

``--into`` replaces the table between the file's ``<!-- cost-table:start -->`` and
``<!-- cost-table:end -->`` lines instead of printing it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.common import write_doc  # noqa: E402
from harness.leaderboard.costs import CostTable, read_table  # noqa: E402


def board_tasks(suites: str) -> list[str]:
    """The task addresses of the board's suites (comma-separated suites or tasks)."""
    from harness.tasks.index import TaskIndex

    return [ref.address for ref in TaskIndex.build([]).resolve(suites.split(","))]


def markdown(table: CostTable, planned: list[str]) -> str:
    """Task rows (one column group per model), a totals row, then the planned tasks each model
    has no measurement of."""
    models = sorted(table.models)
    tasks = sorted({t for m in models for t in table.models[m]})
    head = ["task"] + [f"{m}: {h}" for m in models
                       for h in ("prompts", "CPU-s", "ms/prompt", "load")]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for task in tasks:
        cells = [f"`{task}`"]
        for m in models:
            c = table.models[m].get(task)
            cells += (["–"] * 4 if c is None else
                      [f"{c.prompts:,}", f"{c.cpu_s:.1f}", f"{1000 * c.cpu_s / c.prompts:.0f}",
                       "–" if c.load_avg is None else f"{c.load_avg:.1f}"])
        lines.append("| " + " | ".join(cells) + " |")
    total = ["**total**"]
    for m in models:
        costs = table.models[m].values()
        cpu = sum(c.cpu_s for c in costs)
        prompts = sum(c.prompts for c in costs)
        total += [f"{prompts:,}", f"{cpu:,.0f} ({cpu / 3600:.2f} core-h)",
                  f"{1000 * cpu / max(prompts, 1):.0f}", ""]
    lines.append("| " + " | ".join(total) + " |")
    engines = {m: sorted({c.engine for c in table.models[m].values()}) for m in models}
    lines += ["", "Engines: " + "; ".join(f"{m}: {', '.join(e)}" for m, e in engines.items()),
              "", "Not measured: " + "; ".join(
                  f"{m}: {', '.join(sorted(set(planned) - set(table.models[m]))) or 'none'}"
                  for m in models)]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--costs", type=Path, default=None, help="cost table (default: shipped)")
    ap.add_argument("--into", type=Path, default=None, help="Markdown file to update in place")
    ap.add_argument("--tasks", default="lengthgen,compgen,easy2hard,instructdiv",
                    help="the board's suites or tasks (what 'not measured' is counted against)")
    args = ap.parse_args()
    table = markdown(read_table(args.costs), board_tasks(args.tasks))
    if args.into is None:
        print(table)
        return
    write_doc(args.into, {"cost-table": table})


if __name__ == "__main__":
    main()
