"""Mean ± sd and min–max across training seeds, per variant and bucket, from the committed
``leaderboards/reference/<task>/<variant>-s<seed>/results.json`` files (markdown table).

    .venv/bin/python examples/reference_models/summarize.py [ROOT]

A variant whose ID accuracy (all ID items) is under 90% for a seed is marked: that seed has not
learned the task, and its OOD numbers say nothing about generalization.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path


def bucket_acc(results: Path) -> tuple[dict[str, float], dict[str, str], float]:
    """Per-bucket accuracy, bucket roles, and accuracy over all ID items of one run."""
    task = json.loads(results.read_text(encoding="utf-8"))["tasks"][0]
    buckets = task["templates"][0]["buckets"]
    acc = {b["bucket"]: b["accuracy"] for b in buckets}
    roles = {b["bucket"]: b["role"] for b in buckets}
    ids = [b for b in buckets if b["role"] == "ID"]
    id_acc = sum(b["correct"] for b in ids) / max(1, sum(b["n"] for b in ids))
    return acc, roles, id_acc


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "leaderboards/reference")
    runs: dict[tuple[str, str], list[tuple[int, dict[str, float], float]]] = defaultdict(list)
    roles: dict[str, str] = {}
    for res in sorted(root.glob("*/*-s*/results.json")):
        variant, seed = res.parent.name.rsplit("-s", 1)
        acc, r, id_acc = bucket_acc(res)
        roles.update(r)
        runs[(res.parent.parent.name, variant)].append((int(seed), acc, id_acc))
    if not runs:
        raise SystemExit(f"no */*-s*/results.json under {root}")
    for (task, variant), seeds in sorted(runs.items()):
        labels = sorted(seeds[0][1], key=float)
        weak = [s for s, _, id_acc in seeds if id_acc < 0.9]
        print(f"\n### {task} · {variant} · seeds {sorted(s for s, _, _ in seeds)}"
              + (f" — seeds {weak} below 90% ID: not learned" if weak else ""))
        print("\n| bucket | role | mean | sd | min | max |\n|---|---|---|---|---|---|")
        for lab in labels:
            xs = [100 * acc[lab] for _, acc, _ in seeds]
            sd = statistics.stdev(xs) if len(xs) > 1 else 0.0
            print(f"| {lab} | {roles[lab]} | {statistics.fmean(xs):.1f} | {sd:.1f} | "
                  f"{min(xs):.1f} | {max(xs):.1f} |")


if __name__ == "__main__":
    main()
