"""Mean ± sd and min–max across training seeds, per variant and bucket, from the committed
``leaderboards/reference/<task>/<variant>-s<seed>/results.json`` files (markdown table).

    .venv/bin/python examples/reference_models/summarize.py [ROOT]

A variant whose ID accuracy (all ID items) is under 90% for a seed is marked: that seed has not
learned the task, and its OOD numbers say nothing about generalization. Each variant's heading
line gives its success rate over seeds (a seed succeeds when its all-OOD accuracy is at least
90%; Madsen & Johansen's measure) with a 95% Wilson interval, and its edge success rate (the
first OOD bucket, just past the training edge, at least 90%). Then the paper contrasts
(``CONTRASTS``): the difference of two families' success rates over seeds with Newcombe's
interval (MOVER on exact limits, seeds as the trials), and whether it reproduces the
prediction. After each variant's table, one line per seed: ID and OOD accuracy, the ID−OOD gap
with its interval from results.json, the extrapolation horizon (from the run's ``gaps``), and
each bucket's accuracy with its 95% Wilson CI.
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

from harness.scoring.intervals import Proportion, diff_interval
from harness.scoring.stats import wilson_interval

SUCCESS = 0.9  # a seed succeeds when its all-OOD accuracy reaches this

#: (claim, paper, task, family predicted to succeed, task, family predicted not to, which OOD)
CONTRASTS = [
    ("an LSTM extends parity, a transformer does not", "Delétang et al. 2023",
     "reference_parity", "lstm", "reference_parity", "rope", "all OOD"),
    ("copying distinct letters extends past the edge, copying with repeats does not",
     "Zhou et al. 2023", "reference_copy_unique", "rope", "reference_copy_repeat", "rope", "edge"),
    ("index hints make reversed addition extend past the edge", "Zhou et al. 2023",
     "reference_addition_hints", "rope", "reference_addition_reversed", "rope", "edge"),
]


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


def success_line(ood: list[float], what: str = "all OOD") -> str:
    """How many seeds reach SUCCESS all-OOD accuracy, with the rate's 95% Wilson interval."""
    k, n = sum(a >= SUCCESS for a in ood), len(ood)
    lo, hi = wilson_interval(k, n)
    return (f"success ({what} >= {100 * SUCCESS:.0f}%): {k} of {n} seeds, "
            f"{100 * k / n:.0f}% [{100 * lo:.0f}, {100 * hi:.0f}]")


def edge(acc: dict[str, float], roles: dict[str, str]) -> float:
    """Accuracy in the first OOD bucket (just past the training edge)."""
    first = min((k for k in acc if not k.startswith("all ") and roles[k] == "OOD"), key=float)
    return acc[first]


def contrast_lines(runs: dict[tuple[str, str], list[tuple[int, dict[str, float], float]]],
                   roles: dict[str, dict[str, str]]) -> list[str]:
    """One markdown row per contrast whose two families have runs."""
    out = ["| claim (paper) | OOD measure | predicted to extend: seeds ≥ 90% | predicted not to "
           "| difference [95% CI] | verdict |", "|---|---|---|---|---|---|"]
    for claim, paper, ta, fa, tb, fb, which in CONTRASTS:
        if (ta, fa) not in runs or (tb, fb) not in runs:
            continue
        k = []
        for task, fam in ((ta, fa), (tb, fb)):
            seeds = runs[(task, fam)]
            vals = [acc["all OOD"] if which == "all OOD" else edge(acc, roles[task])
                    for _, acc, _ in seeds]
            k.append((sum(v >= SUCCESS for v in vals), len(vals)))
        (ka, na), (kb, nb) = k
        pa = Proportion(ka / na, na, float(na))
        pb = Proportion(kb / nb, nb, float(nb))
        lo, hi = diff_interval(pa, pb)
        # a contrast is about generalizing only where both families fit the ID range
        fits = [sum(acc["all ID"] >= SUCCESS for _, acc, _ in runs[(t, f)])
                for t, f in ((ta, fa), (tb, fb))]
        verdict = ("reproduced" if lo > 0 else "opposite" if hi < 0 else
                   "not reproduced (interval includes 0)")
        if lo > 0 and fits[1] == 0:
            verdict = (f"not a generalization contrast: no seed of {task_label(tb, fb)} fits "
                       f"the ID range (ID ≥ {100 * SUCCESS:.0f}%: 0 of {nb})")
        elif lo > 0 and which != "all OOD":
            verdict += " (first OOD step only)"
        out.append(f"| {claim} ({paper}) | {which} | {task_label(ta, fa)}: {ka} of {na} | "
                   f"{task_label(tb, fb)}: {kb} of {nb} | {100 * (pa.mean - pb.mean):.0f} "
                   f"[{100 * lo:.0f}, {100 * hi:.0f}] pts | {verdict} |")
    return out


def task_label(task: str, fam: str) -> str:
    return f"{task.removeprefix('reference_')} {fam}"


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
        if any(r == "OOD" for r in roles[task].values()):
            edge_ok = [edge(acc, roles[task]) for _, acc, _ in seeds]
            print(f"edge {success_line(edge_ok, 'first OOD bucket')}")
        print("\n| bucket | role | mean | sd | min | max |\n|---|---|---|---|---|---|")
        for lab in labels:
            xs = [100 * acc[lab] for _, acc, _ in seeds]
            sd = f"{statistics.stdev(xs):.1f}" if len(xs) > 1 else "n/a"  # one seed: no spread
            print(f"| {lab} | {roles[task][lab]} | {statistics.fmean(xs):.1f} | {sd} | "
                  f"{min(xs):.1f} | {max(xs):.1f} |")
        print()
        for res in files[(task, variant)]:
            print(seed_line(res))
    lines = contrast_lines(runs, roles)
    if len(lines) > 2:
        print("\n### Contrasts the papers predict (success rates over seeds)\n")
        print("\n".join(lines))


if __name__ == "__main__":
    main()
