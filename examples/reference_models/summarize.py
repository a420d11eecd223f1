"""Mean ± sd and min–max across training seeds, per variant and bucket, from the committed
``leaderboards/reference/<task>/<variant>-s<seed>/results.json`` files (markdown table).

    .venv/bin/python examples/reference_models/summarize.py [ROOT]

A variant whose ID accuracy (all ID items) is under 90% for a seed is marked: that seed has not
learned the task, and its OOD numbers say nothing about generalization. Each variant's heading
line gives its success rate over seeds (a seed succeeds when its all-OOD accuracy is at least
90%; Madsen & Johansen's measure) with a 95% Wilson interval. After each variant's table, one
line per seed: ID and OOD accuracy, the ID−OOD gap with its bootstrap CI, the
extrapolation horizon (from the run's ``gaps``), and each bucket's accuracy with its 95% Wilson CI.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from harness.scoring.stats import wilson_interval

SUCCESS = 0.9  # a seed succeeds when its all-OOD accuracy reaches this


def bucket_acc(results: Path) -> tuple[dict[str, float], dict[str, str], float]:
    """Per-bucket accuracy (plus "all ID" and "all OOD"), roles, and all-ID accuracy of one run."""
    task = json.loads(results.read_text(encoding="utf-8"))["tasks"][0]
    buckets = task["templates"][0]["buckets"]
    acc = {b["bucket"]: b["accuracy"] for b in buckets}
    roles = {b["bucket"]: b["role"] for b in buckets}
    for role in ("ID", "OOD"):
        of = [b for b in buckets if b["role"] == role]
        acc[f"all {role}"] = sum(b["correct"] for b in of) / max(1, sum(b["n"] for b in of))
        roles[f"all {role}"] = role
    return acc, roles, acc["all ID"]


def seed_line(results: Path) -> str:
    """One run's ID/OOD accuracy, gap [CI], horizon and per-bucket accuracy [CI], in percent."""
    tpl = json.loads(results.read_text(encoding="utf-8"))["tasks"][0]["templates"][0]
    acc, _, id_acc = bucket_acc(results)
    ood_acc = acc["all OOD"]
    gaps = tpl.get("gaps") or {}
    gap, hor = gaps.get("id_ood") or {}, gaps.get("horizon") or {}
    gap_s = (f"{100 * gap['value']:.1f} [{100 * gap['ci_low']:.1f}, {100 * gap['ci_high']:.1f}]"
             if gap.get("value") is not None else str(gaps.get("status") or "n/a"))
    hor_s = (f"{hor['value']:g} ({hor['factor']:.2f}x max ID; threshold "
             f"{100 * hor['threshold']:.1f}%)" if hor.get("value") is not None else "n/a")
    curve = " · ".join(f"{b['bucket']}: {100 * b['accuracy']:.0f} "
                       f"[{100 * b['ci_low']:.0f}, {100 * b['ci_high']:.0f}]"
                       for b in tpl["buckets"])
    learned = "" if id_acc >= 0.9 else " — not learned (ID < 90%)"
    return (f"- {results.parent.name}: ID {100 * id_acc:.1f}, OOD {100 * ood_acc:.1f}, "
            f"gap {gap_s}, horizon {hor_s}{learned}\n  {curve}")


def success_line(ood: list[float]) -> str:
    """How many seeds reach SUCCESS all-OOD accuracy, with the rate's 95% Wilson interval."""
    k, n = sum(a >= SUCCESS for a in ood), len(ood)
    lo, hi = wilson_interval(k, n)
    return (f"success (all OOD >= {100 * SUCCESS:.0f}%): {k} of {n} seeds, "
            f"{100 * k / n:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]")


def main() -> None:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "leaderboards/reference")
    runs: dict[tuple[str, str], list[tuple[int, dict[str, float], float]]] = defaultdict(list)
    roles: dict[str, dict[str, str]] = defaultdict(dict)  # task -> bucket label -> role
    files: dict[tuple[str, str], list[Path]] = defaultdict(list)
    for res in sorted(root.glob("*/*-s*/results.json")):
        variant, seed = res.parent.name.rsplit("-s", 1)
        acc, r, id_acc = bucket_acc(res)
        roles[res.parent.parent.name].update(r)
        runs[(res.parent.parent.name, variant)].append((int(seed), acc, id_acc))
        files[(res.parent.parent.name, variant)].append(res)
    if not runs:
        raise SystemExit(f"no */*-s*/results.json under {root}")
    for (task, variant), seeds in sorted(runs.items()):
        labels = sorted((k for k in seeds[0][1] if not k.startswith("all ")), key=float)
        labels += ["all ID", "all OOD"]
        weak = [s for s, _, id_acc in seeds if id_acc < 0.9]
        print(f"\n### {task} · {variant} · seeds {sorted(s for s, _, _ in seeds)}"
              + (f" — seeds {weak} below 90% ID: not learned" if weak else ""))
        print(f"\n{success_line([acc['all OOD'] for _, acc, _ in seeds])}")
        print("\n| bucket | role | mean | sd | min | max |\n|---|---|---|---|---|---|")
        for lab in labels:
            xs = [100 * acc[lab] for _, acc, _ in seeds]
            sd = f"{statistics.stdev(xs):.1f}" if len(xs) > 1 else "n/a"  # one seed: no spread
            print(f"| {lab} | {roles[task][lab]} | {statistics.fmean(xs):.1f} | {sd} | "
                  f"{min(xs):.1f} | {max(xs):.1f} |")
        print()
        for res in files[(task, variant)]:
            print(seed_line(res))


if __name__ == "__main__":
    main()
